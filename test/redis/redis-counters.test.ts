import { setTimeout as sleep } from 'node:timers/promises'
import type { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config/config.js'
import { createRedis } from '../../src/db/redis.js'
import { RedisCounterStore } from '../../src/limits/redis-counters.js'
import { build, createUser, tempDir, TEST_SECRET, testConfig } from '../helper.js'
import { PrivateRedis, TEST_REDIS_URL, uniquePrefix } from './helper.js'
import { BAD_LOGIN, RATE_LIMITED } from '../patterns.js'

/*
 * With REDIS_URL the counters behind every limit live in Redis, so limits hold
 * across instances; while Redis is unreachable each instance counts locally and answers anyway.
 */

/** A client like the app's, counting the outages it reports; disconnected at teardown. */
function client (t: Test, url: string) {
  const events = { down: 0, up: 0 }
  const redis = createRedis(url, { down: () => { events.down++ }, up: () => { events.up++ } })
  t.teardown(() => { redis.disconnect() })
  return { redis, events }
}

/** The next `name` event (unlike events.once, an 'error' meanwhile — a failed retry — does not reject). */
async function next (redis: Redis, name: 'ready' | 'reconnecting'): Promise<void> {
  await new Promise((resolve) => { redis.once(name, resolve) })
}

/**
 * Counts the commands `redis` sends: each call of the returned function answers how many since
 * the previous one (a wall clock would measure the box, not the store).
 */
function commandsSent (t: Test, redis: Redis): () => number {
  const calls = t.capture(redis, 'sendCommand', redis.sendCommand)
  return () => calls().length
}

async function ready (redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await next(redis, 'ready')
}

t.test('hits from two connections count one window, atomically', async (t) => {
  const prefix = uniquePrefix(t)
  const a = client(t, TEST_REDIS_URL).redis
  const b = client(t, TEST_REDIS_URL).redis
  await Promise.all([ready(a), ready(b)])
  const stores = [new RedisCounterStore(a, prefix), new RedisCounterStore(b, prefix)]
  const counters = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2]?.hit('k', 60_000)))
  t.same(counters.map((c) => c?.count).sort((x = 0, y = 0) => x - y), Array.from({ length: 40 }, (_, i) => i + 1), 'every hit got its own count')
  const resets = counters.map((c) => c?.resetAt ?? 0)
  t.ok(Math.max(...resets) - Math.min(...resets) < 1000, 'one window: the same reset time for all')
  t.equal(await a.pttl(`${prefix}counter:k`) > 59_000, true, 'the window was set once, by the first hit')

  const peeked = await stores[1]?.peek('k')
  t.equal(peeked?.count, 40)
  await stores[0]?.reset('k')
  t.equal(await stores[1]?.peek('k'), undefined, 'a reset on one connection is seen on the other')
  t.equal(await stores[1]?.peek('never-hit'), undefined)
})

t.test('a window ends after its length and the next hit starts a new one', async (t) => {
  const { redis } = client(t, TEST_REDIS_URL)
  await ready(redis)
  const store = new RedisCounterStore(redis, uniquePrefix(t))
  t.equal((await store.hit('w', 200)).count, 1)
  t.equal((await store.hit('w', 200)).count, 2)
  await sleep(300)
  t.equal(await store.peek('w'), undefined)
  const next = await store.hit('w', 200)
  t.equal(next.count, 1)
  t.ok(next.resetAt - Date.now() <= 200 && next.resetAt - Date.now() > 100, 'the new window has its full length')
})

t.test('while Redis is down the store counts in memory without waiting, and shares again once it returns', async (t) => {
  const server = await PrivateRedis.start(t)
  const a = client(t, server.url)
  const b = client(t, server.url)
  await Promise.all([ready(a.redis), ready(b.redis)])
  const storeA = new RedisCounterStore(a.redis, 'p:')
  const storeB = new RedisCounterStore(b.redis, 'p:')
  t.equal((await storeA.hit('k', 60_000)).count, 1)
  t.equal((await storeB.hit('k', 60_000)).count, 2, 'shared while Redis is up')

  await server.stop()
  await next(a.redis, 'reconnecting')
  const sent = commandsSent(t, a.redis)
  const local = []
  for (let i = 0; i < 5; i++) local.push((await storeA.hit('k', 60_000)).count)
  t.same(local, [1, 2, 3, 4, 5], 'counted in this instance\'s memory')
  t.equal((await storeA.peek('k'))?.count, 5)
  t.equal(sent(), 0, 'no call was sent to (and so none waited on) the dead Redis')
  t.equal(a.events.down, 1, 'one outage reported, not one per call')
  t.equal(storeA.shared, false)

  await server.start()
  await Promise.all([next(a.redis, 'ready'), next(b.redis, 'ready')])
  t.equal(a.events.up, 1)
  t.equal(storeA.shared, true)
  // nothing was persisted, so the shared window starts again
  sent() // the reconnect's own commands
  t.equal((await storeA.hit('k', 60_000)).count, 1)
  t.ok(sent() > 0, 'the count of commands sent sees a call that reaches Redis')
  t.equal((await storeB.hit('k', 60_000)).count, 2, 'shared again')
  await storeA.reset('k')
  t.equal(await storeA.peek('k'), undefined, 'a reset clears the window counted locally during the outage too')
})

t.test('a Redis that hangs costs one command timeout, then is skipped for a second', async (t) => {
  const server = await PrivateRedis.start(t)
  const { redis } = client(t, server.url)
  await ready(redis)
  const store = new RedisCounterStore(redis, 'h:')
  t.equal((await store.hit('k', 60_000)).count, 1)
  server.pause()
  t.teardown(() => { server.resume() })
  const started = Date.now()
  t.equal((await store.hit('k', 60_000)).count, 1, 'the timed-out hit is counted in memory')
  t.ok(Date.now() - started < 1000, `the first call waited only the command timeout (${Date.now() - started} ms)`)
  const sent = commandsSent(t, redis)
  t.equal((await store.hit('k', 60_000)).count, 2)
  t.equal((await store.peek('k'))?.count, 2)
  t.equal(sent(), 0, 'later calls skip the hanging Redis: nothing sent, nothing waited on')
  t.equal(store.shared, false)

  server.resume()
  await sleep(1100)
  t.equal(store.shared, true, 'Redis is asked again after the pause')
  sent() // the reconnect's own commands
  const shared = await store.hit('k', 60_000)
  t.ok(sent() > 0, 'the count of commands sent sees a call that reaches Redis')
  // the hit that timed out may have run when Redis resumed, so the count is read back, not guessed
  t.equal(await redis.get('h:counter:k'), String(shared.count), 'counted in Redis again')
})

t.test('the login throttle and the login rate limit count the attempts made on two apps sharing Redis', async (t) => {
  const values = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t), LOGIN_MAX_FAILURES: 2, LOGIN_RATE_LIMIT: '4/m' }
  const a = await build(t, values)
  const b = await build(t, values)
  const user = await createUser(b, { email: 'shared@example.com' })
  const attempt = (password: string) => ({ method: 'POST' as const, url: '/auth/login', remoteAddress: '203.0.113.9', payload: { email: user.email, password } })

  const first = await a.inject(attempt('wrong-password'))
  t.equal(first.statusCode, 401)
  t.same(first.json(), BAD_LOGIN)
  t.equal(first.headers['ratelimit-remaining'], '3')
  const second = await b.inject(attempt('wrong-password'))
  t.equal(second.statusCode, 401)
  t.equal(second.headers['ratelimit-remaining'], '2', 'B counts on from A\'s attempt')

  const locked = await b.inject(attempt(user.password))
  t.equal(locked.statusCode, 429, 'two failures, one on each app, lock the pair even with the right password')
  t.same(locked.json(), RATE_LIMITED)
  t.ok(Number(locked.headers['retry-after']) > 800, 'Retry-After is the rest of the failure window')

  const fourth = await a.inject({ ...attempt('wrong-password'), payload: { email: 'other@example.com', password: 'x' } })
  t.equal(fourth.statusCode, 401, 'another email is not throttled')
  const fifth = await a.inject({ ...attempt('wrong-password'), payload: { email: 'other@example.com', password: 'x' } })
  t.equal(fifth.statusCode, 429, 'the fifth attempt from the address, across both apps, passes LOGIN_RATE_LIMIT')
  t.same(fifth.json(), RATE_LIMITED)
  t.equal(fifth.headers['ratelimit-remaining'], '0')
})

t.test('an app whose Redis is unreachable starts, answers, and warns once', async (t) => {
  const server = await PrivateRedis.start(t)
  await server.stop()
  const lines: string[] = []
  const config = testConfig(t, { REDIS_URL: server.url, LOG_LEVEL: 'warn', LOGIN_MAX_FAILURES: 2 })
  const app = await buildApp(config, { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await app.ready()
  const user = await createUser(app)
  const attempt = (password: string) => app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password } })
  t.equal((await attempt(user.password)).statusCode, 200)
  t.equal((await attempt('wrong-password')).statusCode, 401)
  t.equal((await attempt('wrong-password')).statusCode, 401)
  const locked = await attempt(user.password)
  t.equal(locked.statusCode, 429, 'the throttle still holds, per instance')
  t.same(locked.json(), RATE_LIMITED)
  await sleep(500)
  const warnings = lines.map((line) => JSON.parse(line) as { level: number, msg: string }).filter((r) => r.level === 40)
  t.same(warnings.map((r) => r.msg).sort(), [
    'Redis is unreachable: limits are counted per instance until it returns',
    'revocation broadcast lost: reading revocations from the database until Redis returns'
  ], 'one warning for the counters and one for the broadcast, whatever the number of requests')
})

t.test('REDIS_PREFIX and REVOCATION_POLL_MS are read and checked', async (t) => {
  const load = (values: Record<string, unknown>) => loadConfig({ fromEnvironment: false, values: { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, ...values } })
  const defaults = load({})
  t.equal(defaults.redisPrefix, 'gatehouse:')
  t.equal(defaults.revocationPollMs, undefined, 'unset: the store decides whether to poll')
  const set = load({ REDIS_URL: 'redis://cache:6379/2', REDIS_PREFIX: 'auth-eu:', REVOCATION_POLL_MS: '250' })
  t.equal(set.redisUrl, 'redis://cache:6379/2')
  t.equal(set.redisPrefix, 'auth-eu:')
  t.equal(set.revocationPollMs, 250)
  t.throws(() => load({ REDIS_PREFIX: 'has space' }), new ConfigError('Invalid configuration: REDIS_PREFIX must match pattern "^[A-Za-z0-9:_.-]{1,64}$"'))
  t.throws(() => load({ REVOCATION_POLL_MS: '-1' }), new ConfigError('Invalid configuration: REVOCATION_POLL_MS must be >= 0'))
  t.throws(() => load({ REDIS_URL: 'http://cache' }), new ConfigError('Invalid configuration: REDIS_URL must match pattern "^rediss?://"'))
})
