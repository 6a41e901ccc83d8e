import t from 'tap'
import { csrfMatches, isSameOriginForm, newCsrfToken, type FormOriginHeaders } from '../../../src/portal/csrf.js'

const PORTAL = 'https://auth.example.com'

t.test('the Origin rule for pages, row by row', async (t) => {
  const rows: [FormOriginHeaders, boolean, string][] = [
    [{ origin: PORTAL }, true, 'own Origin'],
    [{ origin: PORTAL, 'sec-fetch-site': 'cross-site' }, true, 'own Origin decides, whatever Sec-Fetch-Site says'],
    [{ origin: 'https://evil.example' }, false, 'a foreign Origin'],
    [{ origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }, false, 'a foreign Origin, even with same-origin'],
    [{ origin: 'https://auth.example.com:444' }, false, 'our host on another port is another origin'],
    [{ origin: 'http://auth.example.com' }, false, 'our host over http is another origin'],
    [{ origin: 'https://sub.auth.example.com' }, false, 'a subdomain is another origin'],
    [{ origin: 'null', 'sec-fetch-site': 'same-origin' }, true, '`null` + same-origin (a same-origin form under no-referrer)'],
    [{ origin: 'null', 'sec-fetch-site': 'cross-site' }, false, '`null` + cross-site'],
    [{ origin: 'null', 'sec-fetch-site': 'same-site' }, false, '`null` + same-site'],
    [{ origin: 'null', 'sec-fetch-site': 'none' }, false, '`null` + none'],
    [{ origin: 'null' }, false, '`null` alone'],
    [{ origin: 'null', referer: `${PORTAL}/portal/login` }, false, '`null` is not rescued by a Referer'],
    [{ referer: `${PORTAL}/portal/login` }, true, 'no Origin, own Referer'],
    [{ referer: 'https://evil.example/portal/login' }, false, 'no Origin, a foreign Referer'],
    [{ referer: 'not a url' }, false, 'no Origin, an unreadable Referer'],
    [{ 'sec-fetch-site': 'same-origin' }, true, 'neither Origin nor Referer, Sec-Fetch-Site: same-origin'],
    [{ 'sec-fetch-site': 'cross-site' }, false, 'neither, cross-site'],
    [{ 'sec-fetch-site': ['same-origin', 'same-origin'] }, false, 'a repeated header is not same-origin'],
    [{}, false, 'none of the three'],
    [{ origin: 'garbage' }, false, 'an unreadable Origin']
  ]
  for (const [headers, allowed, why] of rows) t.equal(isSameOriginForm(headers, PORTAL), allowed, why)
})

t.test('the double-submit token: 32 random bytes, compared in constant time and length', async (t) => {
  const token = newCsrfToken()
  t.match(token, /^[A-Za-z0-9_-]{43}$/)
  t.not(newCsrfToken(), token)
  // tokens come from a pool of 128: past three refills, every one is new and well formed
  const many = Array.from({ length: 400 }, () => newCsrfToken())
  t.equal(new Set(many).size, 400)
  t.ok(many.every((one) => /^[A-Za-z0-9_-]{43}$/.test(one)))
  t.equal(csrfMatches(token, token), true)
  t.equal(csrfMatches(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, token), false, 'one character off')
  t.equal(csrfMatches(token.slice(0, -1), token), false, 'shorter')
  t.equal(csrfMatches(token, undefined), false, 'no cookie')
  t.equal(csrfMatches(undefined, token), false, 'no field')
  t.equal(csrfMatches(['x'], token), false, 'not a string')
  t.equal(csrfMatches('', ''), false, 'both empty')
})
