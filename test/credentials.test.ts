import t from 'tap'
import { bearerToken, readAccessCredential, type CredentialCarrier } from '../src/credentials.js'
import { regexInputsDuring } from './helper.js'

function request (authorization?: string, cookie?: string): CredentialCarrier {
  return { headers: authorization === undefined ? {} : { authorization }, cookies: cookie === undefined ? {} : { access_token: cookie } }
}

t.test('the Bearer header is read before the cookie, and a malformed one never falls back to it', async (t) => {
  t.same(readAccessCredential(request('Bearer abc.def.ghi', 'from-cookie')), { source: 'bearer', token: 'abc.def.ghi' })
  t.same(readAccessCredential(request('Bearer', 'from-cookie')), { source: 'bearer', token: undefined })
  t.same(readAccessCredential(request(undefined, 'from-cookie')), { source: 'cookie', token: 'from-cookie' })
  t.same(readAccessCredential(request('Basic dXNlcjpwYXNz', 'from-cookie')), { source: 'cookie', token: 'from-cookie' }, 'another scheme counts as none')
  t.equal(readAccessCredential(request('Basic dXNlcjpwYXNz')), undefined)
  t.equal(readAccessCredential(request()), undefined)
})

t.test('bearerToken reads the RFC 6750 form: the scheme in any case, one or more spaces, one token', async (t) => {
  for (const [header, token] of [
    ['Bearer abc.DEF-ghi_jkl', 'abc.DEF-ghi_jkl'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer    abc', 'abc'],
    ['Bearer abc  ', 'abc'],
    ['Bearer a+b/c~d==', 'a+b/c~d==']
  ] as const) {
    t.equal(bearerToken(header), token, JSON.stringify(header))
  }
  for (const header of ['Bearer', 'Bearer ', 'Bearer    ', 'Bearerabc', 'Bearer\tabc', 'Bearer a b', 'Bearer a\tb', 'Basic abc', ' Bearer abc', 'Token abc']) {
    t.equal(bearerToken(header), undefined, JSON.stringify(header))
  }
})

/** The header that made the old `/^Bearer +(\S*) *$/i` backtrack quadratically: 16,000 spaces, then two words. */
const PADDED = `Bearer${' '.repeat(16_000)}a b`

t.test('a Bearer header padded with 16,000 spaces is malformed and read without any regex', async (t) => {
  t.equal(bearerToken(PADDED), undefined)
  t.same(readAccessCredential(request(PADDED, 'from-cookie')), { source: 'bearer', token: undefined })
  // the reader's cost is then one pass over the header, whatever its shape: no backtracking engine runs on it
  const inputs = await regexInputsDuring(() => {
    bearerToken(PADDED)
    readAccessCredential(request(PADDED))
    readAccessCredential(request(`bearer ${'a'.repeat(16_000)}`))
  })
  t.same(inputs, [], 'no regex ran over client input')
})

t.test('negative control: the regex probe sees a regex run over a header', async (t) => {
  const inputs = await regexInputsDuring(() => /^Bearer +(\S*) *$/i.test('Bearer x'))
  t.same(inputs, ['Bearer x'])
})

t.test('bearerToken accepts only b64token characters (RFC 6750 §2.1) as the token', async (t) => {
  for (const header of ['Bearer abc!', 'Bearer ab"c', 'Bearer a=b', 'Bearer =', 'Bearer a\u00a0b', 'Bearer a,b']) {
    t.equal(bearerToken(header), undefined, JSON.stringify(header))
  }
})
