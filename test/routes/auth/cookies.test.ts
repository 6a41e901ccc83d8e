// Proves plugins/cookies.ts and routes/auth/login.ts.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, setCookies } from '../../helper.js'

const SELF = 'http://localhost:80'
const csrfRejected = { error: 'Forbidden', message: 'Cross-origin request rejected', code: 'csrf_rejected', reason: 'csrf_rejected' }

/** Exactly the access and refresh cookies of docs/api.md#cookies, carrying the body's tokens. */
function assertAuthCookies (t: Test, res: LightMyRequestResponse, secure: boolean): void {
  const body = res.json()
  const extra = secure ? { secure: true as const } : {}
  t.strictSame(setCookies(res), [
    { name: 'access_token', value: body.access_token, attributes: { 'max-age': '900', path: '/', httponly: true, samesite: 'Lax', ...extra } },
    { name: 'refresh_token', value: body.refresh_token, attributes: { 'max-age': '604800', path: '/auth', httponly: true, samesite: 'Lax', ...extra } }
  ])
}

function assertCleared (t: Test, res: LightMyRequestResponse): void {
  const cookies = setCookies(res)
  t.strictSame(cookies.map((c) => [c.name, c.value, c.attributes.path]), [['access_token', '', '/'], ['refresh_token', '', '/auth']])
  for (const { name, attributes } of cookies) {
    const expires = typeof attributes.expires === 'string' ? Date.parse(attributes.expires) : Number.NaN
    t.ok(attributes['max-age'] === '0' || expires < Date.now(), `${name} expires now`)
  }
}

async function signIn (app: FastifyInstance) {
  const user = await createUser(app)
  return await login(app, user, { remember: true })
}

async function refreshByCookie (app: FastifyInstance, refreshToken: string, headers: Record<string, string> = {}) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', cookies: { refresh_token: refreshToken }, headers })
}

async function logoutByCookie (app: FastifyInstance, refreshToken: string, headers: Record<string, string> = {}) {
  return await app.inject({ method: 'POST', url: '/auth/logout', cookies: { refresh_token: refreshToken }, headers })
}

async function me (app: FastifyInstance, accessToken: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(accessToken) })
}

t.test('POST /auth/login with remember sets exactly the HttpOnly access and refresh cookies', async (t) => {
  const app = await build(t)
  const { response } = await signIn(app)
  t.equal(response.statusCode, 200)
  assertAuthCookies(t, response, false)
})

t.test('POST /auth/login with remember in production sets Secure cookies', async (t) => {
  const app = await build(t, { APP_ENV: 'production' })
  const { response } = await signIn(app)
  t.equal(response.statusCode, 200)
  assertAuthCookies(t, response, true)
})

t.test('POST /auth/login without remember sets no cookie', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  for (const extra of [{}, { remember: false }]) {
    const { response } = await login(app, user, extra)
    t.equal(response.statusCode, 200)
    t.equal(response.headers['set-cookie'], undefined)
  }
})

t.test('GET /auth/me is authenticated by the access cookie alone, with no Origin', async (t) => {
  const app = await build(t)
  const { response } = await signIn(app)
  const res = await app.inject({ method: 'GET', url: '/auth/me', cookies: { access_token: response.json().access_token } })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), response.json().user)
})

t.test('GET /auth/me prefers the Bearer header to the cookie', async (t) => {
  const app = await build(t)
  const first = await signIn(app)
  const second = await signIn(app)
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(second.access_token), cookies: { access_token: first.access_token } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().id, second.response.json().user.id)
})

t.test('POST /auth/refresh with the refresh cookie and the server\'s own Origin rotates and re-sets both cookies', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await refreshByCookie(app, tokens.refresh_token, { origin: SELF })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json()
  t.not(body.refresh_token, tokens.refresh_token, 'rotated')
  t.strictSame(body.user, tokens.response.json().user)
  assertAuthCookies(t, res, false)
  t.equal((await me(app, body.access_token)).statusCode, 200)
})

t.test('POST /auth/refresh with the refresh cookie and no Origin or Referer is csrf_rejected', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await refreshByCookie(app, tokens.refresh_token)
  t.equal(res.statusCode, 403)
  t.strictSame(res.json(), csrfRejected)
  t.equal(res.headers['set-cookie'], undefined)
  t.equal((await refreshByCookie(app, tokens.refresh_token, { origin: SELF })).statusCode, 200, 'the token was not spent')
})

t.test('POST /auth/refresh with the refresh cookie and a foreign Origin is csrf_rejected', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  for (const origin of ['https://evil.example', 'http://localhost:8080', 'https://localhost:80', 'null']) {
    const res = await refreshByCookie(app, tokens.refresh_token, { origin })
    t.equal(res.statusCode, 403, origin)
    t.strictSame(res.json(), csrfRejected, origin)
  }
  const referer = await refreshByCookie(app, tokens.refresh_token, { referer: 'https://evil.example/page' })
  t.equal(referer.statusCode, 403, 'a foreign Referer')
  t.strictSame(referer.json(), csrfRejected)
})

t.test('POST /auth/refresh with the refresh cookie and a Referer of the server succeeds', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await refreshByCookie(app, tokens.refresh_token, { referer: `${SELF}/account/settings?tab=1` })
  t.equal(res.statusCode, 200)
  assertAuthCookies(t, res, false)
})

t.test('POST /auth/refresh with the refresh cookie from an origin of CORS_ORIGINS succeeds', async (t) => {
  const app = await build(t, { CORS_ORIGINS: 'https://app.example.com' })
  const tokens = await signIn(app)
  const res = await refreshByCookie(app, tokens.refresh_token, { origin: 'https://app.example.com' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['access-control-allow-origin'], 'https://app.example.com')
  t.equal(res.headers['access-control-allow-credentials'], 'true')
  assertAuthCookies(t, res, false)
  const other = await refreshByCookie(app, res.json().refresh_token, { origin: 'https://other.example.com' })
  t.equal(other.statusCode, 403, 'an origin not listed is still refused')
  t.strictSame(other.json(), csrfRejected)
})

t.test('POST /auth/refresh with the token in the body is not subject to the Origin check', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: tokens.refresh_token }, headers: { origin: 'https://evil.example' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['set-cookie'], undefined, 'no cookies when the token came in the body')
})

t.test('POST /auth/logout with a Bearer header is not subject to the Origin check, even with the cookies', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await app.inject({
    method: 'POST',
    url: '/auth/logout',
    headers: { ...authHeader(tokens.access_token), origin: 'https://evil.example' },
    cookies: { refresh_token: tokens.refresh_token, access_token: tokens.access_token }
  })
  t.equal(res.statusCode, 204)
  assertCleared(t, res)
  t.equal((await me(app, tokens.access_token)).statusCode, 401, 'the session is over')
})

t.test('POST /auth/logout with the refresh cookie and a foreign Origin is csrf_rejected', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await logoutByCookie(app, tokens.refresh_token, { origin: 'https://evil.example' })
  t.equal(res.statusCode, 403)
  t.strictSame(res.json(), csrfRejected)
  t.equal(res.headers['set-cookie'], undefined)
  t.equal((await me(app, tokens.access_token)).statusCode, 200, 'the session was not revoked')
})

t.test('POST /auth/logout with the access cookie alone and no Origin is csrf_rejected', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await app.inject({ method: 'POST', url: '/auth/logout', cookies: { access_token: tokens.access_token } })
  t.equal(res.statusCode, 403)
  t.strictSame(res.json(), csrfRejected)
  t.equal((await me(app, tokens.access_token)).statusCode, 200, 'the session was not revoked')
})

t.test('POST /auth/logout with the refresh cookie and the server\'s Origin signs out and clears the cookies', async (t) => {
  const app = await build(t)
  const tokens = await signIn(app)
  const res = await logoutByCookie(app, tokens.refresh_token, { origin: SELF })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  assertCleared(t, res)
  const after = await me(app, tokens.access_token)
  t.equal(after.statusCode, 401)
  t.strictSame(after.json(), { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' })
})

t.test('a preflight from an origin of CORS_ORIGINS is allowed with credentials', async (t) => {
  const app = await build(t, { CORS_ORIGINS: 'https://app.example.com' })
  const res = await app.inject({
    method: 'OPTIONS',
    url: '/auth/refresh',
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }
  })
  t.equal(res.statusCode, 204)
  t.equal(res.headers['access-control-allow-origin'], 'https://app.example.com')
  t.equal(res.headers['access-control-allow-credentials'], 'true')

  const foreign = await app.inject({
    method: 'OPTIONS',
    url: '/auth/refresh',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' }
  })
  t.equal(foreign.headers['access-control-allow-origin'], undefined, 'another origin is not allowed')
})
