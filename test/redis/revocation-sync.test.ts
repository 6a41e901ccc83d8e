import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { connect } from '../../src/db/store.js'
import { createRedis } from '../../src/db/redis.js'
import { RevocationIndex } from '../../src/revocations/revocation-index.js'
import { RevocationSync, type SyncLogger } from '../../src/revocations/revocation-sync.js'
import type { Claims } from '../../src/tokens/claims.js'
import { authHeader, build, createUser, login, tempDir } from '../helper.js'
import { PrivateRedis, TEST_REDIS_URL, uniquePrefix } from './helper.js'
import { REVOKED } from '../patterns.js'

/*
 * A revocation on one instance is refused by every other within one
 * second, without a database read per request — broadcast through Redis, caught up from the
 * database after any reconnect, or polled when the store is shared and nothing broadcasts.
 */

function sessionOf (token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Claims).session_id
}

async function logout (app: FastifyInstance, token: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(token) })
  if (res.statusCode !== 204) throw new Error(`logout failed: ${res.statusCode} ${res.body}`)
}

/** Milliseconds until `app` refuses the token as revoked (fails the test past `limitMs`). */
async function refusedWithin (t: Test, app: FastifyInstance, token: string, limitMs = 1000): Promise<void> {
  const started = Date.now()
  for (;;) {
    const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
    if (res.statusCode === 401) {
      t.same(res.json(), REVOKED)
      const elapsed = Date.now() - started
      t.ok(elapsed < limitMs, `refused after ${elapsed} ms`)
      return
    }
    t.equal(res.statusCode, 200, 'accepted until the revocation arrives')
    if (Date.now() - started > limitMs) {
      t.fail(`still accepted after ${limitMs} ms`)
      return
    }
    await sleep(20)
  }
}

/** Two apps on one SQLite file, as two instances would share a database. */
async function pair (t: Test, values: Record<string, unknown>): Promise<[FastifyInstance, FastifyInstance]> {
  const databaseUrl = `sqlite:${join(tempDir(t), 'shared.db')}`
  const a = await build(t, { DATABASE_URL: databaseUrl, ...values })
  const b = await build(t, { DATABASE_URL: databaseUrl, ...values })
  return [a, b]
}

const quiet: SyncLogger = { info: () => {}, warn: () => {}, error: () => {} }

t.test('a logout on one app is refused by another sharing Redis within a second, learnt from the broadcast', async (t) => {
  const [a, b] = await pair(t, { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t) })
  const user = await createUser(a)
  const { access_token: token } = await login(a, user)
  const me = await b.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.equal(me.statusCode, 200, 'B accepts the session A started')
  const reads = t.capture(b.store.revocations, 'listAfter', b.store.revocations.listAfter.bind(b.store.revocations))

  await logout(a, token)
  await refusedWithin(t, b, token)
  t.equal(reads.calls.length, 0, 'B never read the revocations table for it: it was pushed')
  t.equal(a.services.revocations.size, 1)
  t.equal(b.services.revocations.size, 1, 'B did not echo it back as a second entry')
})

t.test('with no Redis, apps sharing a store poll it every REVOCATION_POLL_MS', async (t) => {
  const [a, b] = await pair(t, { REVOCATION_POLL_MS: 100 })
  const user = await createUser(a)
  const { access_token: token } = await login(a, user)
  await logout(a, token)
  await refusedWithin(t, b, token)
})

t.test('a database that fails the poll is logged once, not on every tick', async (t) => {
  const store = await connect(`sqlite:${join(tempDir(t), 'closed.db')}`)
  await store.migrate()
  await store.close()
  const errors: string[] = []
  const sync = new RevocationSync({ index: new RevocationIndex(), source: store.revocations, log: { ...quiet, error: (_obj, msg) => { errors.push(msg) } }, pollMs: 20, pollWithoutRedis: true })
  t.teardown(() => sync.close())
  await sync.start()
  await sleep(300)
  t.same(errors, ['reading new revocations failed'])
})

t.test('revocations missed while the subscriber was disconnected are read once it reconnects', async (t) => {
  const server = await PrivateRedis.start(t)
  // the revoking app has no Redis at all: only the database knows of its revocations
  const app = await build(t)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const publisher = createRedis(server.url, { down: () => {}, up: () => {} })
  t.teardown(() => { publisher.disconnect() })
  const index = new RevocationIndex()
  const sync = new RevocationSync({ index, source: app.store.revocations, log: quiet, redis: { publisher, url: server.url, channel: 'c' }, pollMs: 0, pollWithoutRedis: false })
  t.teardown(() => sync.close())
  await sync.start()

  await server.stop()
  await logout(app, token)
  await sleep(300)
  t.notOk(index.has(sessionOf(token)), 'nothing told the index while Redis was down (polling is off here)')
  await server.start()
  for (let i = 0; i < 40 && !index.has(sessionOf(token)); i++) await sleep(50)
  t.ok(index.has(sessionOf(token)), 'the catch-up after the reconnect read it from the database')
})

t.test('a Redis that hangs is detected by the heartbeat, and the database is read meanwhile', async (t) => {
  const server = await PrivateRedis.start(t)
  const app = await build(t)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const publisher = createRedis(server.url, { down: () => {}, up: () => {} })
  t.teardown(() => { publisher.disconnect() })
  const index = new RevocationIndex()
  const warnings: string[] = []
  const infos: string[] = []
  const log: SyncLogger = { ...quiet, warn: (_obj, msg) => { warnings.push(msg) }, info: (_obj, msg) => { infos.push(msg) } }
  const sync = new RevocationSync({ index, source: app.store.revocations, log, redis: { publisher, url: server.url, channel: 'c' }, pollMs: 100, pollWithoutRedis: false })
  t.teardown(() => sync.close())
  await sync.start()

  server.pause()
  t.teardown(() => { server.resume() })
  await logout(app, token)
  for (let i = 0; i < 60 && !index.has(sessionOf(token)); i++) await sleep(50)
  t.ok(index.has(sessionOf(token)), 'learnt from the database while Redis hangs')
  t.same(warnings, ['revocation broadcast lost: reading revocations from the database until Redis returns'])

  server.resume()
  for (let i = 0; i < 60 && infos.length === 0; i++) await sleep(50)
  t.same(infos, ['revocation broadcast restored'], 'the first answered ping ends the outage')
  const other = createRedis(server.url, { down: () => {}, up: () => {} })
  t.teardown(() => { other.disconnect() })
  await new Promise((resolve) => other.once('ready', resolve))
  await other.publish('c', JSON.stringify({ session_id: '44444444-4444-4444-8444-444444444444', expires_at: Date.now() + 60_000 }))
  for (let i = 0; i < 20 && !index.has('44444444-4444-4444-8444-444444444444'); i++) await sleep(25)
  t.ok(index.has('44444444-4444-4444-8444-444444444444'), 'the subscription works again')
})

/** Two syncs of two indexes on one fresh channel, each with its own publisher, no polling. */
async function syncPair (t: Test) {
  const app = await build(t)
  const channel = `${uniquePrefix(t)}revocations`
  const make = async () => {
    const publisher = createRedis(TEST_REDIS_URL, { down: () => {}, up: () => {} })
    t.teardown(() => { publisher.disconnect() })
    const index = new RevocationIndex()
    const sync = new RevocationSync({ index, source: app.store.revocations, log: quiet, redis: { publisher, url: TEST_REDIS_URL, channel }, pollMs: 0, pollWithoutRedis: false })
    t.teardown(() => sync.close())
    await sync.start()
    return { index, publisher }
  }
  return { channel, one: await make(), two: await make() }
}

t.test('two syncs on one channel: a revocation added to one index reaches the other, once, and junk is ignored', async (t) => {
  const { channel, one, two } = await syncPair(t)
  const published: string[] = []
  two.index.onAdd((sessionId) => { published.push(sessionId) })

  const expiresAt = Date.now() + 60_000
  one.index.add('11111111-1111-4111-8111-111111111111', expiresAt)
  for (let i = 0; i < 20 && !two.index.has('11111111-1111-4111-8111-111111111111'); i++) await sleep(25)
  t.ok(two.index.has('11111111-1111-4111-8111-111111111111'))
  t.same(published, [], 'learnt, not re-published')

  for (const junk of ['not json', '{}', '{"session_id":1,"expires_at":2}', JSON.stringify({ session_id: 'x'.repeat(65), expires_at: expiresAt })]) {
    await one.publisher.publish(channel, junk)
  }
  await sleep(100)
  t.equal(two.index.size, 1, 'malformed messages change nothing')
})

t.test('a revocation made while this instance\'s publisher is disconnected is sent when it reconnects', async (t) => {
  const { one, two } = await syncPair(t)
  one.publisher.disconnect()
  one.index.add('22222222-2222-4222-8222-222222222222', Date.now() + 60_000)
  one.index.add('33333333-3333-4333-8333-333333333333', Date.now() - 1)
  await sleep(200)
  t.notOk(two.index.has('22222222-2222-4222-8222-222222222222'), 'nothing could be sent meanwhile')
  await one.publisher.connect()
  for (let i = 0; i < 20 && !two.index.has('22222222-2222-4222-8222-222222222222'); i++) await sleep(25)
  t.ok(two.index.has('22222222-2222-4222-8222-222222222222'), 'sent once the publisher was back')
  t.notOk(two.index.has('33333333-3333-4333-8333-333333333333'), 'one that had expired meanwhile is not sent')
})

t.test('closing the app closes every Redis connection it opened', async (t) => {
  const server = await PrivateRedis.start(t)
  const app = await build(t, { REDIS_URL: server.url })
  const admin = new Redis(server.url)
  t.teardown(() => { admin.disconnect() })
  const names = async () => String(await admin.client('LIST')).split('\n').map((line) => /name=(\S*)/.exec(line)?.[1]).filter((n) => n?.startsWith('gatehouse')).sort()
  t.same(await names(), ['gatehouse', 'gatehouse-revocations'])
  await app.close()
  for (let i = 0; i < 20 && (await names()).length > 0; i++) await sleep(25)
  t.same(await names(), [])
})
