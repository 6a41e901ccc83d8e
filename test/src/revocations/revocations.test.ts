// Proves src/revocations/revocation-index.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import type { Claims } from '../../../src/tokens/claims.js'
import { authHeader, build, buildFrom, createUser, login, testConfig } from '../../helper.js'
import { EXPIRED, REVOKED } from '../../patterns.js'

/*
 * Revocation is immediate, read from memory on every request (never the database),
 * survives a restart, and the in-memory index stays bounded.
 */

function claimsOf (token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Claims
}

async function logout (app: FastifyInstance, token: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(token) })
  if (res.statusCode !== 204) throw new Error(`logout failed: ${res.statusCode} ${res.body}`)
}

async function assertRevoked (t: Test, app: FastifyInstance, url: string, token: string): Promise<void> {
  const res = await app.inject({ method: 'GET', url, headers: authHeader(token) })
  t.equal(res.statusCode, 401, url)
  t.equal(res.headers['www-authenticate'], `Bearer realm="gatehouse", error="invalid_token", error_description="${REVOKED.message}"`, url)
  t.same(res.json(), REVOKED, url)
}

/** Counts every call to every repository method while still calling it. */
function countStoreCalls (t: Test, app: FastifyInstance): () => Record<string, number> {
  const { users, sessions, revocations } = app.store
  const captured: [string, { calls: unknown[] }][] = []
  for (const [name, repository] of Object.entries({ users, sessions, revocations })) {
    const target = repository as unknown as Record<string, (...args: unknown[]) => unknown>
    for (const method of Object.getOwnPropertyNames(Object.getPrototypeOf(repository))) {
      if (method === 'constructor') continue
      captured.push([`${name}.${method}`, t.capture(target, method, target[method])])
    }
  }
  return () => Object.fromEntries(captured.filter(([, c]) => c.calls.length > 0).map(([name, c]) => [name, c.calls.length]))
}

t.test('an access token revoked by logout is still refused by a new app started on the same database', async (t) => {
  const config = testConfig(t)
  const first = await buildFrom(t, config)
  const user = await createUser(first)
  const out = await login(first, user)
  const kept = await login(first, user)
  await logout(first, out.access_token)
  await assertRevoked(t, first, '/auth/me', out.access_token)
  await first.close()

  const second = await buildFrom(t, config)
  t.ok(second.services.revocations.has(claimsOf(out.access_token).session_id), 'the index is loaded from the database at start')
  t.equal(second.services.revocations.size, 1)
  await assertRevoked(t, second, '/auth/me', out.access_token)
  await assertRevoked(t, second, `/api/users/${user.id}`, out.access_token)
  // the refresh token of the revoked session no longer refreshes either
  const refresh = await second.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: out.refresh_token } })
  t.equal(refresh.statusCode, 401)
  t.same(refresh.json(), REVOKED)
  // while the session that was not signed out carries on in the new process
  const alive = await second.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(kept.access_token) })
  t.equal(alive.statusCode, 200)
  t.equal(alive.json().id, user.id)
})

t.test('a revocation leaves the index once no access token of its session can be valid, and the token stays refused', async (t) => {
  // `iat` is a whole second, so a 1 s token signed late in its second could expire before the
  // checks below that need it still valid: 3 s leaves two whole seconds on a loaded machine
  const app = await build(t, { ACCESS_TOKEN_TTL: '3s', REFRESH_TOKEN_TTL: '4s' })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const { exp } = claimsOf(token)
  await logout(app, token)
  t.equal(app.services.revocations.size, 1)
  const live = await app.store.revocations.listLive(new Date().toISOString())
  t.equal(live.length, 1)
  const expiresAt = Date.parse(live[0]?.expiresAt ?? '')
  t.ok(expiresAt >= exp * 1000, 'the revocation outlives every access token of the session')

  // pruning now keeps it: its access token is still within its lifetime
  app.services.revocations.prune(Date.now())
  t.equal(app.services.revocations.size, 1)
  await assertRevoked(t, app, '/auth/me', token)

  await sleep(Math.max(0, exp * 1000 - Date.now()))
  // the time the prune timer would reach once the revocation's own expiry has passed
  const later = expiresAt + 1
  app.services.revocations.prune(later)
  t.equal(app.services.revocations.size, 0, 'the entry is gone from memory')
  t.same(await app.store.revocations.listLive(new Date(later).toISOString()), [], 'and no longer loaded at a start')
  await app.store.revocations.deleteExpired(new Date(later).toISOString())
  t.same(await app.store.revocations.listAfter(0), [], 'and deleted from the table')

  // nothing was lost: the token is refused as expired now
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.equal(res.statusCode, 401)
  t.same(res.json(), EXPIRED)
})

t.test('the /api guard never reads the database: 50 requests, revoked or not, touch only the handler\'s own user read', async (t) => {
  // no catch-up poll (PostgreSQL pass): its reads are on a timer, not per request, but would be counted here
  const app = await build(t, { REVOCATION_POLL_MS: 0 })
  const user = await createUser(app)
  const { access_token: revoked } = await login(app, user)
  const { access_token: valid } = await login(app, user)
  await logout(app, revoked)
  const counts = countStoreCalls(t, app)

  for (let i = 0; i < 50; i++) {
    const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(valid) })
    t.equal(res.statusCode, 200)
  }
  // GET /api/users/:id reads its user in the handler: exactly one read a request (one batch of
  // one id, as the requests come one at a time), nothing else
  t.same(counts(), { 'users.findById': 50, 'users.findByIds': 50 })

  for (let i = 0; i < 50; i++) {
    const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(revoked) })
    t.equal(res.statusCode, 401)
    t.equal(res.json().code, 'token_revoked')
  }
  t.same(counts(), { 'users.findById': 50, 'users.findByIds': 50 }, 'a revoked token is refused from memory, before the handler')

  // the counters do see the store when it is used: a refresh reads the session
  const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: (await login(app, user)).refresh_token } })
  t.equal(refresh.statusCode, 200)
  t.ok((counts()['sessions.findById'] ?? 0) > 0)
})
