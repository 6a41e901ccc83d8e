import type { AddressInfo } from 'node:net'
import t from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'
import { REVOKED } from '../../patterns.js'

/*
 * GET /auth/verify with an API key (routes/auth/verify.ts, plugins/guard.ts, docs/api-keys.md): the
 * identity headers carry the key's claims, the key id as the session id; a revoked or invalid key is
 * a 401; `roles` judges the key's roles. One test over a listening socket with Node's own client.
 */

const ON = { ENABLE_API_KEYS: true }
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }

t.test('a key passes /auth/verify with its own identity headers; revoked, it is refused', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app, { roles: ['user', 'reports'], isSuperuser: true })
  const { access_token: token } = await login(app, user)
  const created = await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload: { name: 'proxy', roles: ['reports'] } })
  const { id, key } = created.json() as { id: string, key: string }
  const res = await app.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(key) })
  t.equal(res.statusCode, 200)
  const { date, connection, ...headers } = res.headers
  t.strictSame(headers, {
    'cache-control': 'no-store',
    'x-auth-user-id': user.id,
    'x-auth-email': user.email,
    'x-auth-roles': 'reports',
    'x-auth-session-id': id,
    'x-auth-superuser': 'false',
    'content-length': '0'
  })
  t.equal(res.body, '')
  const roles = await app.inject({ method: 'GET', url: '/auth/verify?roles=admin', headers: authHeader(key) })
  t.equal(roles.statusCode, 403, 'the key\'s roles are judged, not the superuser owner\'s')
  t.equal((await app.inject({ method: 'GET', url: '/auth/verify?roles=admin,reports', headers: authHeader(key) })).statusCode, 200)
  const post = await app.inject({ method: 'POST', url: '/auth/verify', headers: { ...authHeader(key), 'x-forwarded-method': 'DELETE' } })
  t.equal(post.statusCode, 200, 'a Bearer key is not subject to the cookie CSRF rule')

  const bad = await app.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(key.slice(0, -2) + 'zz') })
  t.same([bad.statusCode, bad.json()], [401, INVALID])
  t.equal((await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${id}`, headers: authHeader(token) })).statusCode, 204)
  const revoked = await app.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(key) })
  t.same([revoked.statusCode, revoked.json()], [401, REVOKED])
  t.equal(revoked.headers['cache-control'], 'no-store')
  const jwt = await app.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(token) })
  t.equal(jwt.statusCode, 200, 'the access token path is as before')
})

t.test('over a listening socket: a key on the first use (a database read) and the next (from memory) on /auth/verify and /api', async (t) => {
  const app = await build(t, { ...ON, API_KEY_RATE_LIMIT: '3/m' })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const { key, id } = (await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload: { name: 'socket' } })).json() as { id: string, key: string }
  // a fresh process would not hold the key: forget it, so the first request reads the database
  app.services.apiKeys?.verifier.forget(id)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const first = await fetch(`${base}/auth/verify`, { headers: authHeader(key) })
  t.equal(first.status, 200)
  t.equal(first.headers.get('x-auth-session-id'), id)
  const second = await fetch(`${base}/api/users/${user.id}`, { headers: authHeader(key) })
  t.equal(second.status, 200)
  t.equal((await second.json() as { id: string }).id, user.id)
  t.equal((await fetch(`${base}/auth/verify`, { headers: authHeader(key) })).status, 200)
  const limited = await fetch(`${base}/auth/verify`, { headers: authHeader(key) })
  t.equal(limited.status, 429, 'API_KEY_RATE_LIMIT on /auth/verify too')
  t.ok(Number(limited.headers.get('retry-after')) >= 1)
  t.same(await limited.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
})
