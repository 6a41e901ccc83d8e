import { createHmac } from 'node:crypto'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, claimsOf, createUser, login, TEST_SECRET } from '../../helper.js'
import { CSRF_REJECTED, EXPIRED, FORBIDDEN, HELMET, INSUFFICIENT_SCOPE, REVOKED } from '../../patterns.js'

/*
 * GET /auth/verify, forward authentication for reverse proxies (docs/proxies.md): the guard's
 * token check from memory, the identity in X-Auth-* headers, `roles`, and the CSRF rule on the
 * proxied request's method. The proxies themselves are in test/proxies/.
 */

const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const SELF = 'http://localhost:80'
const APP_ORIGIN = 'https://app.example.com'
const FOREIGN = 'https://evil.example.net'
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY'] as const

type Method = InjectOptions['method']

interface SignedIn { id: string, email: string, token: string, refresh: string, sessionId: string }

async function signIn (app: FastifyInstance, options: Parameters<typeof createUser>[1] = {}): Promise<SignedIn> {
  const user = await createUser(app, options)
  const { access_token: token, refresh_token: refresh } = await login(app, user)
  return { id: user.id, email: user.email, token, refresh, sessionId: claimsOf(token).session_id }
}

async function verify (app: FastifyInstance, options: { method?: string, url?: string, headers?: Record<string, string>, cookie?: string, payload?: string } = {}): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: (options.method ?? 'GET') as Method,
    url: options.url ?? '/auth/verify',
    headers: options.headers ?? {},
    ...(options.cookie !== undefined && { cookies: { access_token: options.cookie } }),
    ...(options.payload !== undefined && { payload: options.payload })
  })
}

/** Exactly the answer of a signed-in request: status, every header, the empty body. */
function assertIdentity (t: Test, res: LightMyRequestResponse, user: SignedIn, roles: string, superuser = false, what = ''): void {
  t.equal(res.statusCode, 200, `${what} status`)
  const { date, connection, ...headers } = res.headers
  // the empty 200 is read by the proxy alone: no-store and the identity, none of the API's browser headers
  t.strictSame(headers, {
    'cache-control': 'no-store',
    'x-auth-user-id': user.id,
    'x-auth-email': user.email,
    'x-auth-roles': roles,
    'x-auth-session-id': user.sessionId,
    'x-auth-superuser': String(superuser),
    'content-length': '0'
  }, `${what} headers`)
  t.equal(res.body, '', `${what} body`)
}

function challenge (message: string): string {
  return `Bearer realm="gatehouse", error="invalid_token", error_description="${message}"`
}

function assertRefused (t: Test, res: LightMyRequestResponse, body: typeof INVALID, what: string): void {
  t.equal(res.statusCode, 401, `${what} status`)
  t.equal(res.headers['www-authenticate'], body === MISSING ? 'Bearer realm="gatehouse"' : challenge(body.message), `${what} WWW-Authenticate`)
  t.equal(res.headers['cache-control'], 'no-store', `${what} Cache-Control`)
  // an error body may reach a browser (Caddy passes it on): it carries the API's security headers
  t.match(res.headers, HELMET, `${what} security headers`)
  t.equal(res.headers['x-auth-user-id'], undefined, `${what} no identity`)
  // a HEAD answer has the headers of the GET one (its content-length included) and no body
  if (what.startsWith('HEAD')) t.equal(res.body, '', `${what} body`)
  else t.same(res.json(), body, `${what} body`)
}

/** The roles a route asked for and the token lacks: reason missing_role, naming them, with the insufficient_scope challenge. */
function missingRoles (roles: string): Record<string, unknown> {
  return { ...FORBIDDEN, reason: 'missing_role', required_roles: roles.split(/[ ,]+/).filter(Boolean) }
}

function assertForbidden (t: Test, res: LightMyRequestResponse, body: Record<string, unknown>, what: string): void {
  t.equal(res.statusCode, 403, `${what} status`)
  t.equal(res.headers['www-authenticate'], body.reason === 'missing_role' ? INSUFFICIENT_SCOPE : undefined, `${what} challenge`)
  t.equal(res.headers['cache-control'], 'no-store', `${what} Cache-Control`)
  t.match(res.headers, HELMET, `${what} security headers`)
  t.equal(res.headers['x-auth-user-id'], undefined, `${what} no identity`)
  t.same(res.json(), body, `${what} body`)
}

/** A real access token's claims, changed and re-signed with the default HS256 secret. */
function forge (token: string, change: Record<string, unknown>): string {
  const [header = ''] = token.split('.')
  const input = `${header}.${Buffer.from(JSON.stringify({ ...claimsOf(token), ...change })).toString('base64url')}`
  return `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`
}

t.test('GET /auth/verify with a Bearer token answers 200, an empty body, no-store and the five identity headers, nothing else', async (t) => {
  const app = await build(t)
  const user = await signIn(app, { roles: ['user', 'editor'] })
  assertIdentity(t, await verify(app, { headers: authHeader(user.token) }), user, 'user,editor')
})

t.test('/auth/verify answers every method alike and never reads the body: a form, a wrong type, an oversized body', async (t) => {
  const app = await build(t, { BODY_LIMIT: 1024 })
  const user = await signIn(app)
  for (const method of METHODS) {
    const withBody = method !== 'GET' && method !== 'HEAD'
    const headers = withBody ? { ...authHeader(user.token), 'content-type': 'application/x-www-form-urlencoded' } : authHeader(user.token)
    const res = await verify(app, { method, headers, ...(withBody && { payload: 'x'.repeat(4096) }) })
    assertIdentity(t, res, user, 'user', false, method)
  }
  for (const method of METHODS) assertRefused(t, await verify(app, { method }), MISSING, `${method} without a token`)
})

t.test('/auth/verify takes the access_token cookie when there is no Bearer header, and the header first when both are there', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  assertIdentity(t, await verify(app, { cookie: user.token }), user, 'user', false, 'cookie')
  assertIdentity(t, await verify(app, { headers: authHeader(user.token), cookie: 'garbage' }), user, 'user', false, 'good header, bad cookie')
  assertRefused(t, await verify(app, { headers: authHeader('garbage'), cookie: user.token }), INVALID, 'bad header, good cookie')
  // an empty Bearer is how `Bearer $TOKEN` arrives with the variable unset: no token, and the header was meant
  assertRefused(t, await verify(app, { headers: { authorization: 'Bearer ' }, cookie: user.token }), MISSING, 'empty Bearer, good cookie')
})

t.test('/auth/verify refuses each bad credential with 401, its code and the Bearer challenge', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const [head, payload, signature = ''] = user.token.split('.')
  const tampered = `${head}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`
  const cases: [string, Record<string, string>, string | undefined, typeof INVALID][] = [
    ['no credential', {}, undefined, MISSING],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, undefined, MISSING],
    ['a malformed Bearer header', { authorization: 'Bearer a b' }, undefined, INVALID],
    ['not a JWT', authHeader('not-a-jwt'), undefined, INVALID],
    ['a wrong signature', authHeader(tampered), undefined, INVALID],
    ['the refresh token', authHeader(user.refresh), undefined, INVALID],
    ['an access token of type refresh', authHeader(forge(user.token, { type: 'refresh' })), undefined, INVALID],
    ['an expired token', authHeader(forge(user.token, { exp: Math.floor(Date.now() / 1000) })), undefined, EXPIRED],
    ['a bad cookie', {}, 'garbage', INVALID],
    ['the refresh token as cookie', {}, user.refresh, INVALID]
  ]
  for (const [what, headers, cookie, body] of cases) assertRefused(t, await verify(app, { headers, ...(cookie !== undefined && { cookie }) }), body, what)
  // the forging is sound: re-signed unchanged, the token passes, so each refusal above is its one change
  t.equal((await verify(app, { headers: authHeader(forge(user.token, {})) })).statusCode, 200)
})

t.test('/auth/verify refuses a signed-out session at once, from memory, without reading the database', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const other = await signIn(app)
  t.equal((await verify(app, { headers: authHeader(user.token) })).statusCode, 200)
  const out = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(user.token) })
  t.equal(out.statusCode, 204)
  // every storage method counted: the verify answers below must not call one
  const calls: string[] = []
  for (const name of ['users', 'sessions', 'revocations', 'auditEvents'] as const) {
    const repository = app.store[name] as unknown as Record<string, unknown>
    for (const key of Object.getOwnPropertyNames(Object.getPrototypeOf(repository))) {
      if (key === 'constructor' || typeof repository[key] !== 'function') continue
      t.intercept(repository, key, { value: (...args: unknown[]) => { calls.push(`${name}.${key}`); return (Object.getPrototypeOf(repository)[key] as (...a: unknown[]) => unknown).apply(repository, args) } })
    }
  }
  assertRefused(t, await verify(app, { headers: authHeader(user.token) }), REVOKED, 'signed out, Bearer')
  assertRefused(t, await verify(app, { cookie: user.token }), REVOKED, 'signed out, cookie')
  assertIdentity(t, await verify(app, { headers: authHeader(other.token) }), other, 'user', false, 'another session')
  t.strictSame(calls, [], 'no database read')
  // the counting works: a route that reads the database is seen
  await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(other.token) })
  t.not(calls.length, 0, 'the probe sees a read')
})

t.test('/auth/verify?roles= asks for one of the listed roles; a superuser passes; empty asks nothing', async (t) => {
  const app = await build(t)
  const user = await signIn(app, { roles: ['user', 'editor'] })
  const bare = await signIn(app, { roles: [] })
  const root = await signIn(app, { roles: ['user'], isSuperuser: true })
  const pass = ['editor', 'admin,editor', 'admin, editor', 'user,admin', '', ',', '%20', 'editor&other=1']
  for (const roles of pass) assertIdentity(t, await verify(app, { url: `/auth/verify?roles=${roles}`, headers: authHeader(user.token) }), user, 'user,editor', false, `roles=${roles}`)
  assertIdentity(t, await verify(app, { url: '/auth/verify?other=1', headers: authHeader(user.token) }), user, 'user,editor', false, 'no roles parameter')
  // whole names only: a role is never matched as part of another
  const fail = ['admin', 'users', 'edit', 'superuser', 'xeditor,useR', 'ADMIN']
  for (const roles of fail) assertForbidden(t, await verify(app, { url: `/auth/verify?roles=${roles}`, headers: authHeader(user.token) }), missingRoles(roles), `roles=${roles}`)
  assertIdentity(t, await verify(app, { url: '/auth/verify', headers: authHeader(bare.token) }), bare, '', false, 'no roles at all')
  assertForbidden(t, await verify(app, { url: '/auth/verify?roles=user', headers: authHeader(bare.token) }), missingRoles('user'), 'no roles, roles=user')
  assertIdentity(t, await verify(app, { url: '/auth/verify?roles=admin', headers: authHeader(root.token) }), root, 'user', true, 'superuser')
  // the token is checked first: a bad one is 401, whatever the roles
  assertRefused(t, await verify(app, { url: '/auth/verify?roles=admin' }), MISSING, 'no token, roles=admin')
})

t.test('/auth/verify refuses a roles parameter given twice or longer than 1024 characters with 422', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const twice = await verify(app, { url: '/auth/verify?roles=user&roles=admin', headers: authHeader(user.token) })
  t.equal(twice.statusCode, 422)
  t.same(twice.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { roles: ['The roles field is invalid'] } })
  const long = await verify(app, { url: `/auth/verify?roles=${'a,'.repeat(512)}user`, headers: authHeader(user.token) })
  t.equal(long.statusCode, 422)
  t.same(long.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { roles: ['The roles field must not exceed 1024 characters'] } })
  assertIdentity(t, await verify(app, { url: `/auth/verify?roles=${'a,'.repeat(509)}user`, headers: authHeader(user.token) }), user, 'user', false, '1022 characters')
})

t.test('/auth/verify applies the CSRF rule to the original method of a cookie-authenticated request', async (t) => {
  const app = await build(t, { CORS_ORIGINS: APP_ORIGIN })
  const user = await signIn(app)
  const cookie = user.token
  const cases: [string, { method?: string, headers: Record<string, string> }, boolean][] = [
    // X-Forwarded-Method (nginx as configured, Caddy, Traefik)
    ['X-Forwarded-Method POST, foreign Origin', { headers: { 'x-forwarded-method': 'POST', origin: FOREIGN } }, false],
    ['X-Forwarded-Method DELETE, no Origin', { headers: { 'x-forwarded-method': 'DELETE' } }, false],
    ['X-Forwarded-Method PUT, foreign Referer', { headers: { 'x-forwarded-method': 'PUT', referer: `${FOREIGN}/form` } }, false],
    ['X-Forwarded-Method POST, the proxied app\'s Origin (CORS_ORIGINS)', { headers: { 'x-forwarded-method': 'POST', origin: APP_ORIGIN } }, true],
    ['X-Forwarded-Method POST, its Referer', { headers: { 'x-forwarded-method': 'POST', referer: `${APP_ORIGIN}/page` } }, true],
    ['X-Forwarded-Method POST, gatehouse\'s own Origin', { headers: { 'x-forwarded-method': 'POST', origin: SELF } }, true],
    ['X-Forwarded-Method GET, foreign Origin', { headers: { 'x-forwarded-method': 'GET', origin: FOREIGN } }, true],
    ['X-Forwarded-Method a lower-case get is not a safe method', { headers: { 'x-forwarded-method': 'get', origin: FOREIGN } }, false],
    // X-Original-Method, when there is no X-Forwarded-Method
    ['X-Original-Method POST, foreign Origin', { headers: { 'x-original-method': 'POST', origin: FOREIGN } }, false],
    ['X-Original-Method PATCH, the app\'s Origin', { headers: { 'x-original-method': 'PATCH', origin: APP_ORIGIN } }, true],
    ['X-Original-Method HEAD, foreign Origin', { headers: { 'x-original-method': 'HEAD', origin: FOREIGN } }, true],
    ['X-Forwarded-Method wins over X-Original-Method (POST over GET)', { headers: { 'x-forwarded-method': 'POST', 'x-original-method': 'GET', origin: FOREIGN } }, false],
    ['X-Forwarded-Method wins over X-Original-Method (GET over POST)', { headers: { 'x-forwarded-method': 'GET', 'x-original-method': 'POST', origin: FOREIGN } }, true],
    // neither header: the verify request's own method
    ['POST itself, foreign Origin', { method: 'POST', headers: { origin: FOREIGN } }, false],
    ['DELETE itself, the app\'s Origin', { method: 'DELETE', headers: { origin: APP_ORIGIN } }, true],
    ['OPTIONS itself, no Origin', { method: 'OPTIONS', headers: {} }, true],
    // not a CORS preflight answered by @fastify/cors: the token is checked like any other
    ['OPTIONS itself, a preflight from the app', { method: 'OPTIONS', headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' } }, true],
    ['GET itself, foreign Origin', { headers: { origin: FOREIGN } }, true],
    // the forwarded method overrides the request's own both ways
    ['POST itself, X-Forwarded-Method GET, foreign Origin', { method: 'POST', headers: { 'x-forwarded-method': 'GET', origin: FOREIGN } }, true]
  ]
  for (const [what, request, allowed] of cases) {
    const res = await verify(app, { ...request, cookie })
    if (allowed) assertIdentity(t, res, user, 'user', false, what)
    else assertForbidden(t, res, CSRF_REJECTED, what)
  }
  const preflight = await verify(app, { method: 'OPTIONS', headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' } })
  assertRefused(t, preflight, MISSING, 'a preflight without a token')
  // a Bearer header is not subject to the rule: no form can send one
  assertIdentity(t, await verify(app, { headers: { ...authHeader(user.token), 'x-forwarded-method': 'POST', origin: FOREIGN } }), user, 'user', false, 'Bearer')
})
