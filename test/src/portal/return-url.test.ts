import t from 'tap'
import { checkReturnUrl, isLocalHost, RETURN_URL_MAX, type ReturnUrlRules } from '../../../src/portal/return-url.js'
import { ALLOWED, REFUSED } from './return-url-cases.js'

const RULES: ReturnUrlRules = {
  publicUrl: 'http://auth.gh.localhost',
  publicHost: 'auth.gh.localhost',
  cookieDomain: 'gh.localhost',
  returnHosts: new Set(['partner.example']),
  production: false
}

t.test('every attack of the list is refused', async (t) => {
  for (const [raw, why] of REFUSED) t.equal(checkReturnUrl(raw, RULES), undefined, why)
})

t.test('the allowed forms are taken, serialised as WHATWG does (the negative control of the list)', async (t) => {
  for (const [raw, expected, why] of ALLOWED) t.equal(checkReturnUrl(raw, RULES), expected, why)
  t.equal(ALLOWED.at(-1)?.[0].length, RETURN_URL_MAX)
})

t.test('without COOKIE_DOMAIN, its subdomains are foreign; PUBLIC_URL\'s host stays exact', async (t) => {
  const rules = { ...RULES, cookieDomain: undefined }
  t.equal(checkReturnUrl('https://app.gh.localhost/', rules), undefined)
  t.equal(checkReturnUrl('https://gh.localhost/', rules), undefined)
  t.equal(checkReturnUrl('https://x.auth.gh.localhost/', rules), undefined, 'a subdomain of PUBLIC_URL\'s host is not PUBLIC_URL\'s host')
  t.equal(checkReturnUrl('https://xn--uth-5cd.gh.localhost/', rules), undefined, 'a punycode lookalike of our host')
  t.equal(checkReturnUrl('https://auth.gh.localhost/x', rules), 'https://auth.gh.localhost/x')
})

t.test('with COOKIE_DOMAIN, a lookalike label under it is still under it (the operator owns the domain)', async (t) => {
  t.equal(checkReturnUrl('https://аuth.gh.localhost/', RULES), 'https://xn--uth-5cd.gh.localhost/')
})

t.test('in production, plain http is refused even for localhost; https stays', async (t) => {
  const rules = { ...RULES, publicUrl: 'https://auth.example.com', publicHost: 'auth.example.com', cookieDomain: 'example.com', production: true }
  t.equal(checkReturnUrl('http://localhost/', { ...rules, returnHosts: new Set(['localhost']) }), undefined)
  t.equal(checkReturnUrl('https://localhost/', { ...rules, returnHosts: new Set(['localhost']) }), 'https://localhost/')
  t.equal(checkReturnUrl('/portal/account', rules), 'https://auth.example.com/portal/account')
  t.equal(checkReturnUrl('http://auth.example.com/', rules), undefined, 'plain http to our own non-local host')
  t.equal(checkReturnUrl('https://app.example.com/', rules), 'https://app.example.com/')
})

t.test('an empty value is no URL', async (t) => {
  t.equal(checkReturnUrl('', RULES), undefined)
})

t.test('isLocalHost: localhost, *.localhost and loopback addresses only', async (t) => {
  for (const host of ['localhost', 'localhost.', 'a.localhost', 'auth.gh.localhost', '127.0.0.1', '127.1.2.3', '[::1]']) t.ok(isLocalHost(host), host)
  for (const host of ['localhost.com', 'evillocalhost', 'example.com', '128.0.0.1', '10.0.0.1', '[::2]']) t.notOk(isLocalHost(host), host)
})
