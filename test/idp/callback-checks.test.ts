import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { Envelope } from '../../src/crypto/envelope.js'
import { IDP_COOKIE_AGE, IdpStateCookie, type IdpState } from '../../src/idp/state-cookie.js'
import { SealedCookie } from '../../src/portal/flow.js'
import { claimsOf, setCookies } from '../helper.js'
import { startSignerUpstream } from './signer-upstream.js'
import { accessClaims, answerOf, auditOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, PORTAL_ORIGIN, redirectUri, refusal } from './support.js'
import { startUpstream } from './upstream.js'

/*
 * The callback's checks, in order (src/idp/idp-flow.ts, src/idp/oidc-upstream.ts): the cookie (its
 * seal and ten minutes), its provider and state; an upstream error; RFC 9207's iss; the code
 * exchange; the ID token's signature, alg, aud, azp, exp, iat and nonce; userinfo's sub. Two oidc-provider instances (two issuers, a
 * redirect_uri each) and a hand-written jose signer for what oidc-provider cannot be made to get wrong.
 */

const corp = await startUpstream([{ client_id: 'gatehouse', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri('corp')] }])
const other = await startUpstream([{ client_id: 'gatehouse', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri('other')] }])
const signer = await startSignerUpstream({ clientId: 'gatehouse', clientSecret: CLIENT_SECRET, subject: 'signed-1', email: 'sig@example.com' })
t.teardown(async () => { await Promise.all([corp.stop(), other.stop(), signer.stop()]) })

const app = await idpApp(t, [
  { id: 'corp', type: 'oidc', display_name: 'Corp SSO', issuer: corp.issuer, allow_signup: true },
  { id: 'other', type: 'oidc', display_name: 'Other SSO', issuer: other.issuer, allow_signup: true },
  { id: 'signed', type: 'oidc', display_name: 'Signer', issuer: signer.issuer, allow_signup: true }
])
const INVALID = (name: string) => refusal(400, 'idp_invalid', 'Sign-in failed', `The answer from ${name} could not be verified. Start the sign-in again.`)
/** what a refused callback sets: the state cookie cleared, the page's CSRF cookie */
const REFUSED_COOKIES = ['__Host-gh_idp=', '__Host-gh_csrf=…']

let accounts = 0
/** a fresh upstream account that signs in next, so that each test signs up someone new */
function nextAccount (upstream: typeof corp): string {
  const sub = `acct-${++accounts}`
  upstream.script({ sub, email: `${sub}@example.com`, email_verified: true, name: `Person ${accounts}` })
  return sub
}

t.test('the start: 302 to the authorization endpoint with every parameter, and the sealed cookie', async (t) => {
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/corp/start?rd=/portal/account')
  t.equal(start.statusCode, 302)
  const location = new URL(String(start.headers.location))
  t.equal(`${location.origin}${location.pathname}`, `${corp.issuer}/auth`)
  const query = Object.fromEntries(location.searchParams)
  t.strictSame(Object.keys(query).sort(), ['client_id', 'code_challenge', 'code_challenge_method', 'nonce', 'redirect_uri', 'response_type', 'scope', 'state'])
  t.match(query, { response_type: 'code', client_id: 'gatehouse', redirect_uri: `${PORTAL_ORIGIN}/auth/idp/corp/callback`, scope: 'openid email profile', code_challenge_method: 'S256' })
  t.match(query.state, /^[A-Za-z0-9_-]{43}$/, '256 random bits')
  t.match(query.nonce, /^[A-Za-z0-9_-]{43}$/)
  t.match(query.code_challenge, /^[A-Za-z0-9_-]{43}$/)
  const [cookie] = setCookies(start)
  t.equal(cookie?.name, '__Host-gh_idp')
  t.strictSame(cookie?.attributes, { 'max-age': '600', path: '/', httponly: true, secure: true, samesite: 'Lax' })
  t.notOk(cookie?.value.includes(query.state ?? ''), 'the state is sealed, not readable')
})

t.test('a callback that passes every check signs in (the negative control of what follows)', async (t) => {
  const sub = nextAccount(corp)
  const { callback } = await new IdpBrowser(app).signIn('corp', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', 'access_token=…', '__Host-refresh_token=…', '__Host-gh_flow='])
  const access = claimsOf(setCookies(callback).find((c) => c.name === 'access_token')?.value ?? '')
  t.match(access, { email: `${sub}@example.com`, aal: 'aal1', amr: ['ext'], idp: 'corp' })
})

t.test('a state that is not the cookie\'s: 400 idp_invalid, nothing signed in', async (t) => {
  const browser = new IdpBrowser(app)
  nextAccount(corp)
  const start = await browser.get('/auth/idp/corp/start')
  const url = await browser.throughUpstream(String(start.headers.location))
  url.searchParams.set('state', 'x'.repeat(43))
  const res = await browser.get(`${url.pathname}${url.search}`)
  t.strictSame(answerOf(res), INVALID('Corp SSO'))
  t.strictSame(cookiesSet(res), REFUSED_COOKIES)
  url.searchParams.delete('state')
  t.strictSame(answerOf(await browser.get(`${url.pathname}${url.search}`)), INVALID('Corp SSO'), 'no state at all (and the cookie is gone anyway)')
})

t.test('the callback in another browser (no cookie): 400 idp_invalid', async (t) => {
  nextAccount(corp)
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/corp/start')
  const url = await browser.throughUpstream(String(start.headers.location))
  const elsewhere = await new IdpBrowser(app).get(`${url.pathname}${url.search}`)
  t.strictSame(answerOf(elsewhere), INVALID('Corp SSO'))
  t.strictSame(cookiesSet(elsewhere), REFUSED_COOKIES)
  t.equal((await browser.get(`${url.pathname}${url.search}`)).statusCode, 303, 'the browser that started it still signs in')
})

t.test('a callback used twice: the cookie is gone; with the old cookie put back, the spent code fails the exchange', async (t) => {
  nextAccount(corp)
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/corp/start')
  const sealed = browser.jar.get('__Host-gh_idp') ?? ''
  const url = await browser.throughUpstream(String(start.headers.location))
  t.equal((await browser.get(`${url.pathname}${url.search}`)).statusCode, 303)
  t.strictSame(answerOf(await browser.get(`${url.pathname}${url.search}`)), INVALID('Corp SSO'))
  const replay = new IdpBrowser(app)
  replay.jar.set('__Host-gh_idp', sealed)
  t.strictSame(answerOf(await replay.get(`${url.pathname}${url.search}`)), INVALID('Corp SSO'))
})

t.test('a cookie for another provider (the answer of one provider sent to another\'s callback): 400 idp_invalid', async (t) => {
  nextAccount(other)
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/other/start')
  const url = await browser.throughUpstream(String(start.headers.location))
  t.equal(url.pathname, '/auth/idp/other/callback', 'each provider has its own redirect_uri')
  t.strictSame(answerOf(await browser.get(`/auth/idp/corp/callback${url.search}`)), INVALID('Corp SSO'))
})

t.test('a cookie for another provider, with an answer of this provider that fits it (state, nonce, code_challenge taken over): 400 idp_invalid', async (t) => {
  nextAccount(corp)
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/other/start')
  const asked = new URL(String(start.headers.location))
  t.equal(`${asked.origin}${asked.pathname}`, `${other.issuer}/auth`)
  // other's request, asked of corp with corp's redirect_uri: corp answers it as its own, iss and all
  const atCorp = new URL(`${corp.issuer}/auth${asked.search}`)
  atCorp.searchParams.set('redirect_uri', redirectUri('corp'))
  const url = await browser.throughUpstream(atCorp.href)
  t.equal(url.pathname, '/auth/idp/corp/callback')
  t.equal(url.searchParams.get('iss'), corp.issuer, 'RFC 9207 is satisfied')
  t.equal(url.searchParams.get('state'), asked.searchParams.get('state'), 'the state is the cookie\'s')
  const res = await browser.get(`${url.pathname}${url.search}`)
  t.strictSame(answerOf(res), INVALID('Corp SSO'))
  t.strictSame(cookiesSet(res), REFUSED_COOKIES)
})

t.test('a state cookie past its ten minutes, changed, sealed by a key not held or for another cookie: 400 idp_invalid; 599 s old, it signs in', async (t) => {
  nextAccount(corp)
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/corp/start')
  const flow = app.services.idp?.stateCookie.open(browser.jar.get('__Host-gh_idp')) as IdpState
  t.equal(flow.provider, 'corp')
  const url = await browser.throughUpstream(String(start.headers.location))
  const keys = app.config.dataEncryptionKeys ?? []
  const sealedAgo = (ms: number) => new IdpStateCookie(new Envelope(keys), () => Date.now() - ms).seal(flow, IDP_COOKIE_AGE)
  const parts = sealedAgo(0).split('.')
  const body = parts[2] ?? ''
  parts[2] = `${body.slice(0, 8)}${body[8] === 'A' ? 'B' : 'A'}${body.slice(9)}`
  /** the callback in a browser holding `cookie` as its state cookie */
  async function callbackWith (cookie: string): Promise<LightMyRequestResponse> {
    const holder = new IdpBrowser(app)
    holder.jar.set('__Host-gh_idp', cookie)
    return await holder.get(`${url.pathname}${url.search}`)
  }
  const cases: Array<[string, string]> = [
    ['sealed 601 s ago', sealedAgo(601_000)],
    ['one character of the ciphertext changed', parts.join('.')],
    ['sealed under the same key id by another key', new IdpStateCookie(new Envelope([{ id: keys[0]?.id ?? '', key: randomBytes(32) }])).seal(flow, IDP_COOKIE_AGE)],
    ['sealed for the flow cookie', new SealedCookie<IdpState>(new Envelope(keys), '__Host-gh_flow').seal(flow, IDP_COOKIE_AGE)]
  ]
  for (const [label, cookie] of cases) {
    const res = await callbackWith(cookie)
    t.strictSame(answerOf(res), INVALID('Corp SSO'), label)
    t.strictSame(cookiesSet(res), REFUSED_COOKIES, `${label}: cleared`)
  }
  // the seal counts whole seconds: sealed at the top of one, 599 s is still 599 s at the check
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000)))
  const res = await callbackWith(sealedAgo(599_000))
  t.equal(res.statusCode, 303, 'the negative control: 599 s old, the same answer signs in')
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/account`)
})

t.test('RFC 9207: an iss that is not the provider\'s, or none where the provider advertises it, is refused', async (t) => {
  for (const [label, change] of [
    ['another provider\'s issuer (mix-up)', (url: URL) => { url.searchParams.set('iss', other.issuer) }],
    ['no iss', (url: URL) => { url.searchParams.delete('iss') }]
  ] as const) {
    nextAccount(corp)
    const browser = new IdpBrowser(app)
    const start = await browser.get('/auth/idp/corp/start')
    const url = await browser.throughUpstream(String(start.headers.location))
    t.equal(url.searchParams.get('iss'), corp.issuer, 'oidc-provider sends its iss')
    change(url)
    t.strictSame(answerOf(await browser.get(`${url.pathname}${url.search}`)), INVALID('Corp SSO'), label)
  }
})

t.test('an upstream error: access_denied is "sign-in cancelled", any other an idp_error page', async (t) => {
  corp.script({ error: 'access_denied', error_description: 'the user said no' })
  const cancelled = await new IdpBrowser(app).signIn('corp', '?rd=/portal/account')
  t.strictSame(answerOf(cancelled.callback), refusal(400, 'idp_error', 'Sign-in cancelled', 'The sign-in with Corp SSO was cancelled.'))
  t.strictSame(cookiesSet(cancelled.callback), REFUSED_COOKIES)
  corp.script({ error: 'temporarily_unavailable' })
  const failed = await new IdpBrowser(app).signIn('corp')
  t.strictSame(answerOf(failed.callback), refusal(400, 'idp_error', 'Sign-in failed', 'Corp SSO did not sign you in.'))
})

t.test('the ID token from a signer that gets it right signs in, its email from the token (the control of the token checks)', async (t) => {
  signer.script({})
  const { callback } = await new IdpBrowser(app).signIn('signed')
  t.equal(callback.statusCode, 303)
  t.match(claimsOf(setCookies(callback).find((c) => c.name === 'access_token')?.value ?? ''), { email: 'sig@example.com', amr: ['ext'], idp: 'signed' })
})

t.test('an ID token within the 60 s of skew signs in: exp 30 s past, iat 30 s ahead (the control of the refusals beyond it)', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  for (const [label, claims] of [
    ['exp 30 s past', { sub: 'skew-exp', email: 'skew-exp@example.com', exp: now - 30, iat: now - 600 }],
    ['iat 30 s ahead', { sub: 'skew-iat', email: 'skew-iat@example.com', iat: now + 30, exp: now + 330 }]
  ] as const) {
    signer.script({ claims })
    const { callback } = await new IdpBrowser(app).signIn('signed')
    t.equal(callback.statusCode, 303, label)
    t.match(accessClaims(callback), { email: claims.email, idp: 'signed' }, label)
  }
})

t.test('an ID token that fails a check of OIDC Core §3.1.3.7 is refused: 400 idp_invalid', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const cases: Array<[string, Parameters<typeof signer.script>[0]]> = [
    ['aud without the client_id', { claims: { aud: 'someone-else' } }],
    ['exp past (beyond the 60 s of skew)', { claims: { exp: now - 120, iat: now - 600 } }],
    ['iat ahead (beyond the 60 s of skew)', { claims: { iat: now + 600, exp: now + 900 } }],
    ['nonce not the one sent', { claims: { nonce: 'not-the-nonce' } }],
    ['no nonce', { claims: { nonce: undefined } }],
    ['iss not the issuer', { claims: { iss: corp.issuer } }],
    ['azp not the client_id', { claims: { azp: 'someone-else' } }],
    ['signed by a key not in the JWKS', { foreignKey: true }],
    ['signed by a key of the JWKS whose alg (RS256) the provider does not advertise', { rs256: true }],
    ['alg none', { unsigned: true }]
  ]
  for (const [label, script] of cases) {
    signer.script(script)
    const { callback } = await new IdpBrowser(app).signIn('signed')
    t.strictSame(answerOf(callback), INVALID('Signer'), label)
    t.strictSame(cookiesSet(callback), REFUSED_COOKIES, `${label}: no session`)
  }
})

t.test('the email from userinfo when the ID token has none: userinfo\'s sub the ID token\'s signs in; another sub is 400 idp_invalid', async (t) => {
  const fromUserinfo = { sub: 'info-1', email: undefined, email_verified: undefined }
  signer.script({ claims: fromUserinfo, userinfo: { email: 'info-1@example.com', email_verified: true } })
  const { callback } = await new IdpBrowser(app).signIn('signed')
  t.equal(callback.statusCode, 303, 'the negative control: the same sub')
  t.match(accessClaims(callback), { email: 'info-1@example.com', idp: 'signed' })

  signer.script({ claims: { ...fromUserinfo, sub: 'info-2' }, userinfo: { sub: 'someone-else', email: 'info-2@example.com', email_verified: true } })
  const mismatch = await new IdpBrowser(app).signIn('signed')
  t.strictSame(answerOf(mismatch.callback), INVALID('Signer'))
  t.strictSame(cookiesSet(mismatch.callback), REFUSED_COOKIES)
  t.equal(await app.store.users.findByEmail('info-2@example.com'), undefined)
})

t.test('a token endpoint failing on its side: 503 idp_unavailable', async (t) => {
  signer.script({ status: 502 })
  const { callback } = await new IdpBrowser(app).signIn('signed')
  t.strictSame(answerOf(callback), refusal(503, 'idp_unavailable', 'Sign-in unavailable', 'Signer is unavailable. Try again in a moment.'))
})

t.test('none of the refused callbacks signed anyone in: the audit trail has the successful ones only', async (t) => {
  t.strictSame(await auditOf(app, 'login_succeeded'), [], 'each first sign-in was a sign-up')
  const registered = await auditOf(app, 'registered')
  t.strictSame(registered.map((row) => [row.email, row.detail]), [
    ['acct-1@example.com', 'idp:corp'],
    ['acct-3@example.com', 'idp:corp'],
    ['acct-4@example.com', 'idp:corp'],
    ['acct-7@example.com', 'idp:corp'],
    ['sig@example.com', 'idp:signed'],
    ['skew-exp@example.com', 'idp:signed'],
    ['skew-iat@example.com', 'idp:signed'],
    ['info-1@example.com', 'idp:signed']
  ])
})
