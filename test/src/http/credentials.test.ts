import t from 'tap'
import { bearerToken, isBlankBearer, knownBearer, readAccessCredential, type CredentialCarrier } from '../../../src/http/credentials.js'
import { regexInputsDuring } from '../../helper.js'

function request (authorization?: string, cookie?: string): CredentialCarrier {
  return { headers: authorization === undefined ? {} : { authorization }, cookies: cookie === undefined ? {} : { access_token: cookie } }
}

t.test('the Bearer header is read before the cookie, and a malformed one never falls back to it', async (t) => {
  t.same(readAccessCredential(request('Bearer abc.def.ghi', 'from-cookie')), { source: 'bearer', token: 'abc.def.ghi' })
  t.same(readAccessCredential(request('Bearer x y', 'from-cookie')), { source: 'bearer', token: undefined })
  t.same(readAccessCredential(request(undefined, 'from-cookie')), { source: 'cookie', token: 'from-cookie' })
  t.same(readAccessCredential(request('Basic dXNlcjpwYXNz', 'from-cookie')), { source: 'cookie', token: 'from-cookie' }, 'another scheme counts as none')
  t.equal(readAccessCredential(request('Basic dXNlcjpwYXNz')), undefined)
  t.equal(readAccessCredential(request()), undefined)
})

t.test('a blank Bearer header (the scheme, then nothing but spaces) presents no credential, and never falls back to the cookie', async (t) => {
  for (const header of ['Bearer', 'Bearer ', 'bearer    ']) {
    t.equal(isBlankBearer(header), true, JSON.stringify(header))
    t.equal(readAccessCredential(request(header, 'from-cookie')), undefined, JSON.stringify(header))
  }
  for (const header of ['Bearer x', 'Bearer \t', 'Basic ', 'Bear', '']) t.equal(isBlankBearer(header), false, JSON.stringify(header))
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

t.test('a token known to have verified is taken from "Bearer <token>" as is, and every other header reads as without it', async (t) => {
  const known = new Set(['eyJ.abc.def', 'a+b/c~d=='])
  const isKnown = (candidate: string) => known.has(candidate)
  const headers = [
    'Bearer eyJ.abc.def', 'bearer eyJ.abc.def', 'Bearer   eyJ.abc.def', 'Bearer eyJ.abc.def  ', 'Bearer a+b/c~d==',
    'BearerXeyJ.abc.def', 'Bearer\teyJ.abc.def', 'Bearer eyJ.abc.def x', 'Bearer other.token.here', 'Bearer', 'Basic eyJ.abc.def'
  ]
  for (const header of headers) {
    t.same(readAccessCredential(request(header, 'from-cookie'), isKnown), readAccessCredential(request(header, 'from-cookie')), JSON.stringify(header))
  }
  t.same(readAccessCredential(request('Bearer eyJ.abc.def'), isKnown), { source: 'bearer', token: 'eyJ.abc.def' })
  // "Bearer" then any character then a known token is still malformed: only a space separates
  t.same(readAccessCredential(request('BearerXeyJ.abc.def'), isKnown), { source: 'bearer', token: undefined })
  // the predicate is what spares the scan: a "known" string the scan would refuse is taken as it is
  t.same(readAccessCredential(request('Bearer a b'), () => true), { source: 'bearer', token: 'a b' })
  t.same(readAccessCredential(request('Bearer a b'), () => false), { source: 'bearer', token: undefined })
})

t.test('knownBearer takes a known token from "Bearer <token>" only, and leaves every other header to bearerToken', async (t) => {
  const isKnown = (candidate: string) => candidate === 'eyJ.abc.def'
  t.equal(knownBearer('Bearer eyJ.abc.def', isKnown), 'eyJ.abc.def')
  t.equal(knownBearer('bEARER eyJ.abc.def', isKnown), 'eyJ.abc.def', 'the scheme in any case')
  for (const header of ['Bearer  eyJ.abc.def', 'Bearer eyJ.abc.def ', 'Bearer eyJ.abc.def x', 'BearerXeyJ.abc.def', 'Basic eyJ.abc.def', 'Bearer other', 'Bearer', '']) {
    t.equal(knownBearer(header, isKnown), undefined, JSON.stringify(header))
  }
  // those of them bearerToken accepts, it reads as it always did
  t.equal(bearerToken('Bearer  eyJ.abc.def'), 'eyJ.abc.def')
  t.equal(bearerToken('Bearer eyJ.abc.def x'), undefined)
})
