import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { PASSWORD, tempDir, TEST_SECRET } from '../helper.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'
import { RATE_LIMITED, REVOKED } from '../patterns.js'
import { freshSchema, startInstance, type Instance } from './instances.js'

/*
 * API keys across two real server processes on one PostgreSQL schema and one Redis
 * (src/api-keys/key-verifier.ts, src/sessions/session-service.ts revokeKeys, docs/api-keys.md#how-a-key-ends):
 * a key made on A works on B, and once revoked on A — or once its owner loses a role it holds — B
 * refuses it within a second; the same when its owner is deleted or an admin revokes it through the
 * admin route; and API_KEY_RATE_LIMIT counts a key's hits on both instances as one.
 */

const ADMIN = { email: 'admin@example.com', password: PASSWORD }

/** A server's environment: SQLite in a data folder of its own unless `extra` names a database. */
function serverEnv (t: Test, extra: Record<string, string> = {}): Record<string, string> {
  return {
    JWT_SECRET: TEST_SECRET,
    DATA_DIR: tempDir(t),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1',
    ENABLE_API_KEYS: 'true',
    DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ...extra
  }
}

async function startPair (t: Test, extra: Record<string, string> = {}): Promise<[Instance, Instance]> {
  const env = serverEnv(t, { DATABASE_URL: await freshSchema(t), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t), ...extra })
  const a = await startInstance(t, 'A', env)
  const b = await startInstance(t, 'B', env)
  return [a, b]
}

async function signIn (t: Test, instance: Instance, who: { email: string, password: string }): Promise<{ token: string, id: string }> {
  const res = await instance.call('POST', '/auth/login', { body: who })
  t.equal(res.status, 200, `signed in on ${instance.name}`)
  const body = res.body as { access_token: string, user: { id: string } }
  return { token: body.access_token, id: body.user.id }
}

async function keyOf (t: Test, instance: Instance, token: string, body: Record<string, unknown>): Promise<{ id: string, key: string }> {
  const res = await instance.call('POST', '/api/auth/api-keys', { token, body })
  t.equal(res.status, 201, `a key made on ${instance.name}`)
  return res.body as { id: string, key: string }
}

/** `instance` refuses the key as revoked within a second of now, on /api and /auth/verify. */
async function refusedWithinASecond (t: Test, instance: Instance, key: string, path: string): Promise<void> {
  const started = Date.now()
  for (;;) {
    const res = await instance.call('GET', path, { token: key })
    if (res.status === 401) {
      t.same(res.body, REVOKED, `${instance.name} refuses the revoked key`)
      t.ok(Date.now() - started < 1000, `${instance.name} refused it after ${Date.now() - started} ms`)
      const verify = await instance.call('GET', '/auth/verify', { token: key })
      t.same([verify.status, verify.body], [401, REVOKED], 'and so does its /auth/verify')
      return
    }
    t.equal(res.status, 200, 'accepted until the revocation arrives')
    if (Date.now() - started >= 1000) {
      t.fail(`${instance.name} still accepts the key after a second`)
      return
    }
    await sleep(20)
  }
}

t.test('two instances on one PostgreSQL schema and one Redis refuse a key within a second of its end', async (t) => {
  const [a, b] = await startPair(t)
  const admin = await signIn(t, a, ADMIN)

  t.test('a key made and revoked on A: B takes it (reading the database once), then refuses it within a second', async (t) => {
    const { id, key } = await keyOf(t, a, admin.token, { name: 'deploy' })
    const path = `/api/users/${admin.id}`
    const first = await b.call('GET', path, { token: key })
    t.equal(first.status, 200, 'B reads the key on its first use')
    const verify = await b.call('GET', '/auth/verify', { token: key })
    t.equal(verify.status, 200)
    t.equal(verify.headers.get('x-auth-session-id'), id)
    const revoked = await a.call('DELETE', `/api/auth/api-keys/${id}`, { token: admin.token })
    t.equal(revoked.status, 204)
    await refusedWithinASecond(t, b, key, path)
  })

  t.test('an owner losing a role on A ends the key holding it on B within a second', async (t) => {
    const created = await a.call('POST', '/api/users', { token: admin.token, body: { email: 'reporter@example.com', password: PASSWORD, name: 'Reporter', roles: ['user', 'reports'] } })
    t.equal(created.status, 201)
    const reporter = await signIn(t, a, { email: 'reporter@example.com', password: PASSWORD })
    const { key } = await keyOf(t, a, reporter.token, { name: 'reports', roles: ['reports'] })
    const path = `/api/users/${reporter.id}`
    t.equal((await b.call('GET', path, { token: key })).status, 200)
    const demoted = await a.call('PUT', path, { token: admin.token, body: { roles: ['user'] } })
    t.equal(demoted.status, 200)
    await refusedWithinASecond(t, b, key, path)
  })

  t.test('an owner deleted on A: B refuses the key it holds within a second', async (t) => {
    const created = await a.call('POST', '/api/users', { token: admin.token, body: { email: 'leaver@example.com', password: PASSWORD, name: 'Leaver' } })
    t.equal(created.status, 201)
    const leaver = await signIn(t, a, { email: 'leaver@example.com', password: PASSWORD })
    const { key } = await keyOf(t, a, leaver.token, { name: 'leaving' })
    const path = `/api/users/${leaver.id}`
    t.equal((await b.call('GET', path, { token: key })).status, 200, 'B holds the key')
    const deleted = await a.call('DELETE', path, { token: admin.token })
    t.equal(deleted.status, 204)
    // /auth/verify answers 200 until the key is refused; the user's own path would be 404 meanwhile
    await refusedWithinASecond(t, b, key, '/auth/verify')
  })

  t.test('an admin revoking a service account\'s key through /api/users/:id/api-keys/:key_id on A: B refuses it within a second', async (t) => {
    const account = await a.call('POST', '/api/service-accounts', { token: admin.token, body: { name: 'Deployer' } })
    t.equal(account.status, 201)
    const accountId = (account.body as { id: string }).id
    const made = await a.call('POST', `/api/users/${accountId}/api-keys`, { token: admin.token, body: { name: 'deploy job' } })
    t.equal(made.status, 201)
    const { id, key } = made.body as { id: string, key: string }
    const path = `/api/users/${accountId}`
    t.equal((await b.call('GET', path, { token: key })).status, 200, 'B holds the key')
    const revoked = await a.call('DELETE', `/api/users/${accountId}/api-keys/${id}`, { token: admin.token })
    t.equal(revoked.status, 204)
    await refusedWithinASecond(t, b, key, path)
  })

  t.test('no instance logged an error', async (t) => {
    for (const instance of [a, b]) t.same(instance.logs().filter((r) => r.level >= 50), [], `${instance.name} logged no error`)
  })
})

t.test('API_KEY_RATE_LIMIT counts a key\'s hits on both instances in one count through Redis', async (t) => {
  const [a, b] = await startPair(t, { API_KEY_RATE_LIMIT: '3/m' })
  const admin = await signIn(t, a, ADMIN)
  const { key } = await keyOf(t, a, admin.token, { name: 'counted' })
  const path = `/api/users/${admin.id}`
  const statuses: number[] = []
  for (const instance of [a, b, a]) statuses.push((await instance.call('GET', path, { token: key })).status)
  t.same(statuses, [200, 200, 200], 'three hits, on A and B, within the count')
  const refused = await b.call('GET', path, { token: key })
  t.same([refused.status, refused.body], [429, RATE_LIMITED], 'the fourth, on B, is over the shared count')
  const retry = Number(refused.headers.get('retry-after'))
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  const verify = await a.call('GET', '/auth/verify', { token: key })
  t.equal(verify.status, 429, 'and A, which saw two, refuses the fifth')
})

t.test('one server process on SQLite takes a key on /api/users/:id and /auth/verify, and refuses it once revoked', async (t) => {
  const server = await startInstance(t, 'sqlite', serverEnv(t))
  const admin = await signIn(t, server, ADMIN)
  const { id, key } = await keyOf(t, server, admin.token, { name: 'on sqlite' })
  const path = `/api/users/${admin.id}`
  const shown = await server.call('GET', path, { token: key })
  t.same([shown.status, (shown.body as { id: string }).id], [200, admin.id])
  const verify = await server.call('GET', '/auth/verify', { token: key })
  t.same([verify.status, verify.headers.get('x-auth-session-id'), verify.headers.get('x-auth-user-id')], [200, id, admin.id])
  t.equal((await server.call('DELETE', `/api/auth/api-keys/${id}`, { token: admin.token })).status, 204)
  const refused = await server.call('GET', path, { token: key })
  t.same([refused.status, refused.body], [401, REVOKED])
  const verifyRefused = await server.call('GET', '/auth/verify', { token: key })
  t.same([verifyRefused.status, verifyRefused.body], [401, REVOKED])
  t.same(server.logs().filter((r) => r.level >= 50), [], 'no error logged')
})
