import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, claimsOf, createUser, login } from '../../helper.js'
import { CSRF_REJECTED, HELMET } from '../../patterns.js'

/*
 * routes/auth/verify.ts with FORWARD_AUTH_REDIRECT=true (docs/proxies.md#sending-browsers-to-the-sign-in-page):
 * only the 401 of a browser navigation changes, only when the proxied URL comes from a TRUST_PROXY
 * peer and passes the return-URL rule; a missing role stays a 403 (a page for a navigation), and
 * everything else answers as without the setting. The real nginx and Caddy are in test/proxies/.
 */

const PORTAL = 'http://auth.gh.localhost'
const APP_URL = 'http://app.gh.localhost:8080/page?a=1&b=%20x'
const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }
const LOCATION = `${PORTAL}/portal/login?rd=${encodeURIComponent(APP_URL)}`
const FORWARDED = { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.gh.localhost:8080', 'x-forwarded-uri': '/page?a=1&b=%20x' }
const NAVIGATE = { ...FORWARDED, 'sec-fetch-mode': 'navigate', accept: 'text/html,application/xhtml+xml' }
const SETTINGS = { ENABLE_PORTAL: true, PUBLIC_URL: PORTAL, COOKIE_DOMAIN: 'gh.localhost', FORWARD_AUTH_REDIRECT: true, TRUST_PROXY: '127.0.0.1' }

interface Request { method?: string, url?: string, headers?: Record<string, string>, remoteAddress?: string }

async function verify (app: FastifyInstance, request: Request = {}): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: (request.method ?? 'GET') as InjectOptions['method'],
    url: request.url ?? '/auth/verify',
    headers: request.headers ?? NAVIGATE,
    ...(request.remoteAddress !== undefined && { remoteAddress: request.remoteAddress })
  })
}

/** A page's <main>, where its content is. */
function mainOf (html: string): string {
  return /<main>[\s\S]*<\/main>/.exec(html)?.[0] ?? ''
}

/** The redirect of mode=forward_auth: status, Location, the API's headers, no challenge, no body. */
function assertRedirect (t: Test, res: LightMyRequestResponse, status: number, what: string): void {
  t.equal(res.statusCode, status, `${what}: status`)
  const { date, connection, ...headers } = res.headers
  t.strictSame(headers, { ...HELMET, 'cache-control': 'no-store', location: LOCATION, 'content-length': '0' }, `${what}: headers`)
  t.equal(res.body, '', `${what}: no body`)
}

/** §9.2's 401, unchanged: the JSON body, the challenge, and no Location. */
function assertPlain401 (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.statusCode, 401, `${what}: status`)
  t.equal(res.headers.location, undefined, `${what}: no Location`)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"', `${what}: challenge`)
  t.same(res.json(), MISSING, `${what}: body`)
}

t.test('a browser navigation without a token is sent to the sign-in page with its own URL; fetches and API clients keep the 401', async (t) => {
  const app = await build(t, SETTINGS)
  assertRedirect(t, await verify(app), 302, 'Sec-Fetch-Mode navigate')
  assertRedirect(t, await verify(app, { url: '/auth/verify?mode=forward_auth&roles=admin' }), 302, 'mode=forward_auth named')
  assertRedirect(t, await verify(app, { headers: { ...FORWARDED, accept: 'text/html' } }), 302, 'no Sec-Fetch-Mode, Accept text/html')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, cookie: 'access_token=garbage' } }), 302, 'an invalid cookie')
  assertPlain401(t, await verify(app, { headers: { ...FORWARDED, accept: 'text/html', 'x-requested-with': 'XMLHttpRequest' } }), 'Accept text/html with X-Requested-With')
  for (const mode of ['cors', 'no-cors', 'same-origin', 'websocket']) {
    assertPlain401(t, await verify(app, { headers: { ...NAVIGATE, 'sec-fetch-mode': mode } }), `Sec-Fetch-Mode ${mode}, Accept text/html`)
  }
  assertPlain401(t, await verify(app, { headers: { ...FORWARDED, accept: 'application/json' } }), 'an API client (Accept JSON)')
  assertPlain401(t, await verify(app, { headers: FORWARDED }), 'an API client (no Accept)')
})

t.test('mode=forward_auth: 302 for an original GET or HEAD, 303 for any other method', async (t) => {
  const app = await build(t, SETTINGS)
  assertRedirect(t, await verify(app, { method: 'HEAD' }), 302, 'HEAD itself')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-method': 'HEAD' } }), 302, 'X-Forwarded-Method HEAD')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-method': 'POST' } }), 303, 'X-Forwarded-Method POST')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, 'x-original-method': 'PUT' } }), 303, 'X-Original-Method PUT')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-method': 'GET', 'x-original-method': 'POST' } }), 302, 'X-Forwarded-Method wins')
  assertRedirect(t, await verify(app, { method: 'POST' }), 303, 'POST itself')
  assertRedirect(t, await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-method': 'get' } }), 303, 'a lower-case get is not GET')
})

t.test('mode=auth_request: the 401 with its body and challenge, plus the Location for nginx to redirect to', async (t) => {
  const app = await build(t, SETTINGS)
  const res = await verify(app, { url: '/auth/verify?mode=auth_request&roles=' })
  t.equal(res.statusCode, 401)
  t.equal(res.headers.location, LOCATION)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.match(res.headers, { ...HELMET, 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' })
  t.same(res.json(), MISSING)
  const post = await verify(app, { url: '/auth/verify?mode=auth_request', headers: { ...NAVIGATE, 'x-forwarded-method': 'POST' } })
  t.equal(post.statusCode, 401, 'whatever the method')
  t.equal(post.headers.location, LOCATION)
  // a fetch: no Location, so nginx's named location answers 401
  assertPlain401(t, await verify(app, { url: '/auth/verify?mode=auth_request', headers: { ...NAVIGATE, 'sec-fetch-mode': 'cors' } }), 'auth_request, a fetch')
})

t.test('the proxied URL is read only from a TRUST_PROXY peer', async (t) => {
  const app = await build(t, SETTINGS)
  assertPlain401(t, await verify(app, { remoteAddress: '192.0.2.7' }), 'a peer outside TRUST_PROXY')
  assertPlain401(t, await verify(app, { url: '/auth/verify?mode=auth_request', remoteAddress: '192.0.2.7' }), 'auth_request, a peer outside TRUST_PROXY')
  // the negative control: the same request from the listed proxy
  assertRedirect(t, await verify(app, { remoteAddress: '127.0.0.1' }), 302, 'the listed proxy')
  const untrusting = await build(t, { ...SETTINGS, TRUST_PROXY: 'false' })
  assertPlain401(t, await verify(untrusting), 'TRUST_PROXY=false: no peer is trusted')
  const network = await build(t, { ...SETTINGS, TRUST_PROXY: '10.1.0.0/16, 127.0.0.1' })
  assertRedirect(t, await verify(network, { remoteAddress: '10.1.200.3' }), 302, 'a peer inside a listed network')
  assertPlain401(t, await verify(network, { remoteAddress: '10.2.0.1' }), 'a peer outside it')
  const hops = await build(t, { ...SETTINGS, TRUST_PROXY: '1' })
  assertRedirect(t, await verify(hops, { remoteAddress: '192.0.2.7' }), 302, 'TRUST_PROXY=1: the peer is the one trusted hop')
})

t.test('a proxied URL that fails the return-URL rule, or is incomplete, leaves the 401 as it is (never an open redirect)', async (t) => {
  const app = await build(t, SETTINGS)
  const cases: [string, Record<string, string>][] = [
    ['a foreign host', { 'x-forwarded-host': 'evil.example.net' }],
    ['a host merely ending in the domain', { 'x-forwarded-host': 'evilgh.localhost' }],
    ['credentials in the host', { 'x-forwarded-host': 'user@app.gh.localhost' }],
    ['a host with a path', { 'x-forwarded-host': 'evil.example.net/x.gh.localhost' }],
    ['two hosts', { 'x-forwarded-host': 'app.gh.localhost, evil.example.net' }],
    ['another scheme', { 'x-forwarded-proto': 'javascript' }],
    ['a URI that is not a path', { 'x-forwarded-uri': '@evil.example.net/' }],
    ['a backslash', { 'x-forwarded-uri': '/\\evil.example.net' }],
    ['a URI past 2048 characters', { 'x-forwarded-uri': `/${'a'.repeat(2048)}` }],
    ['an empty host', { 'x-forwarded-host': '' }]
  ]
  for (const [what, change] of cases) assertPlain401(t, await verify(app, { headers: { ...NAVIGATE, ...change } }), what)
  for (const header of Object.keys(FORWARDED)) {
    const { [header]: _left, ...rest } = NAVIGATE as Record<string, string>
    assertPlain401(t, await verify(app, { headers: rest }), `without ${header}`)
  }
  // a URI of two slashes is a path of the application's host, not another host
  const doubled = await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-uri': '//evil.example.net/' } })
  t.equal(doubled.headers.location, `${PORTAL}/portal/login?rd=${encodeURIComponent('http://app.gh.localhost:8080//evil.example.net/')}`)
  // https passes too, so the http URL is refused (http is for *.localhost outside production)
  const https = await verify(app, { headers: { ...NAVIGATE, 'x-forwarded-proto': 'https' } })
  t.equal(https.headers.location, `${PORTAL}/portal/login?rd=${encodeURIComponent(APP_URL.replace('http:', 'https:'))}`)
  // the negative control: a foreign host listed in PORTAL_RETURN_HOSTS passes the rule, and is redirected
  const listed = await build(t, { ...SETTINGS, PORTAL_RETURN_HOSTS: 'evil.example.net' })
  const res = await verify(listed, { headers: { ...NAVIGATE, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example.net' } })
  t.equal(res.headers.location, `${PORTAL}/portal/login?rd=${encodeURIComponent('https://evil.example.net/page?a=1&b=%20x')}`)
  assertPlain401(t, await verify(listed, { headers: { ...NAVIGATE, 'x-forwarded-host': 'evil.example.net' } }), 'plain http to a host that is not local')
})

t.test('another mode, or mode given twice, is 422 whatever the credential', async (t) => {
  const app = await build(t, SETTINGS)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const invalid = { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { mode: ['The mode field must be one of: forward_auth, auth_request'] } }
  for (const url of ['/auth/verify?mode=other', '/auth/verify?mode=', '/auth/verify?mode=forward_auth&mode=auth_request']) {
    for (const headers of [NAVIGATE, { ...NAVIGATE, ...authHeader(token) }]) {
      const res = await verify(app, { url, headers })
      t.equal(res.statusCode, 422, url)
      t.same(res.json(), invalid, url)
    }
  }
  t.equal((await verify(app, { url: '/auth/verify?mode=auth_request', headers: authHeader(token) })).statusCode, 200, 'a known mode and a token: 200')
})

t.test('a signed-in user lacking the role gets 403, never a redirect: the forbidden page for a navigation, JSON otherwise', async (t) => {
  const app = await build(t, { ...SETTINGS, CORS_ORIGINS: 'http://app.gh.localhost:8080' })
  const user = await createUser(app, { roles: ['user'] })
  const { access_token: token } = await login(app, user)
  const cookie = { cookie: `access_token=${token}` }
  for (const url of ['/auth/verify?roles=admin', '/auth/verify?roles=admin&mode=auth_request']) {
    const page = await verify(app, { url, headers: { ...NAVIGATE, ...cookie } })
    t.equal(page.statusCode, 403, url)
    t.equal(page.headers.location, undefined, 'no Location')
    t.match(page.headers, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src http://auth.gh.localhost; frame-ancestors 'none'; form-action 'none'",
      'x-frame-options': 'DENY',
      'cache-control': 'no-store'
    })
    t.match(page.body, /<title>Access denied – gatehouse<\/title>/)
    t.match(page.body, `<p>You are signed in as <strong>${user.email}</strong>.</p>`)
    t.match(page.body, /data-code="forbidden"/)
    t.match(page.body, '<code data-reason="missing_role">missing_role</code>')
    t.match(page.body, '<li><code>admin</code></li>')
    t.match(page.body, `<a href="${PORTAL}/portal/login?prompt=login&amp;rd=${encodeURIComponent(APP_URL)}">Sign in as someone else</a>`)
    t.match(page.body, `<a href="${PORTAL}/portal/account">Your account</a>`)
    t.match(page.body, /<link rel="stylesheet" href="http:\/\/auth\.gh\.localhost\/portal\/assets\/style\.[0-9a-f]{10}\.css">/)
    // the same content as /portal/forbidden with the same query, but every URL absolute (the page is served on the application's origin)
    const portal = await app.inject({ method: 'GET', url: `/portal/forbidden?reason=missing_role&roles=admin&rd=${encodeURIComponent(APP_URL)}`, headers: { cookie: `access_token=${token}` } })
    t.equal(portal.statusCode, 403)
    t.equal(mainOf(page.body), mainOf(portal.body).replaceAll('href="/portal/', `href="${PORTAL}/portal/`))
  }
  // from a peer outside TRUST_PROXY the page is the same, but "Sign in as someone else" returns to the default, not to the URL it names
  const untrusted = await verify(app, { url: '/auth/verify?roles=admin', headers: { ...NAVIGATE, ...cookie }, remoteAddress: '192.0.2.7' })
  t.equal(untrusted.statusCode, 403)
  t.match(untrusted.body, `<a href="${PORTAL}/portal/login?prompt=login&amp;rd=${encodeURIComponent(`${PORTAL}/portal/account`)}">Sign in as someone else</a>`)
  const fetched = await verify(app, { url: '/auth/verify?roles=admin', headers: { ...NAVIGATE, ...cookie, 'sec-fetch-mode': 'cors' } })
  t.equal(fetched.statusCode, 403)
  t.same(fetched.json(), { error: 'Forbidden', message: 'You are not allowed to perform this action', code: 'forbidden', reason: 'missing_role', required_roles: ['admin'] })
  // the CSRF rule is unchanged: JSON, no page, no redirect
  const csrf = await verify(app, { headers: { ...NAVIGATE, ...cookie, 'x-forwarded-method': 'POST', origin: 'http://evil.example.net' } })
  t.equal(csrf.statusCode, 403)
  t.equal(csrf.headers.location, undefined)
  t.same(csrf.json(), CSRF_REJECTED)
  // the refusal is audited with who was refused
  const denied = await app.auditTrail.page({ event: 'access_denied' }, 1, 100)
  t.strictSame(denied.entries.map((e) => ({ actorId: e.actorId, sessionId: e.sessionId, detail: e.detail })), [
    // the CSRF rule refuses before the token is taken: as without the setting, no actor
    { actorId: null, sessionId: null, detail: 'csrf_rejected: GET /auth/verify' },
    { actorId: user.id, sessionId: claimsOf(token).session_id, detail: 'missing_role: GET /auth/verify' },
    { actorId: user.id, sessionId: claimsOf(token).session_id, detail: 'missing_role: GET /auth/verify' },
    { actorId: user.id, sessionId: claimsOf(token).session_id, detail: 'missing_role: GET /auth/verify' },
    { actorId: user.id, sessionId: claimsOf(token).session_id, detail: 'missing_role: GET /auth/verify' }
  ], 'each refusal audited as any 403, naming who was refused')
  // AUTHZ_DENIAL_DETAILS=false: the page names no roles either
  const quiet = await build(t, { ...SETTINGS, AUTHZ_DENIAL_DETAILS: false })
  const other = await createUser(quiet)
  const { access_token: quietToken } = await login(quiet, other)
  const hidden = await verify(quiet, { url: '/auth/verify?roles=admin', headers: { ...NAVIGATE, cookie: `access_token=${quietToken}` } })
  t.equal(hidden.statusCode, 403)
  t.match(hidden.body, `You are signed in as <strong>${other.email}</strong>`)
  t.notMatch(hidden.body, '<code>admin</code>')
})

t.test('a valid token passes as before, and with the setting off a navigation keeps the plain 401 (the negative control)', async (t) => {
  const app = await build(t, SETTINGS)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const ok = await verify(app, { headers: { ...NAVIGATE, cookie: `access_token=${token}` } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['x-auth-email'], user.email)
  t.equal(ok.body, '')
  const off = await build(t, { ...SETTINGS, FORWARD_AUTH_REDIRECT: false })
  assertPlain401(t, await verify(off), 'setting off')
  assertPlain401(t, await verify(off, { url: '/auth/verify?mode=auth_request' }), 'setting off, auth_request')
  assertPlain401(t, await verify(off, { url: '/auth/verify?mode=other' }), 'setting off: mode is not read')
  const offUser = await createUser(off, { roles: [] })
  const { access_token: offToken } = await login(off, offUser)
  const denied = await verify(off, { url: '/auth/verify?roles=admin', headers: { ...NAVIGATE, cookie: `access_token=${offToken}` } })
  t.equal(denied.statusCode, 403)
  t.equal(denied.headers['content-type'], 'application/json; charset=utf-8', 'setting off: the 403 stays JSON')
})
