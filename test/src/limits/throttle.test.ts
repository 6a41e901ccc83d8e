import t, { type Test } from 'tap'
import { createRedis } from '../../../src/db/redis.js'
import { RedisCounterStore } from '../../../src/limits/redis-counters.js'
import { FailureThrottle, MemoryCounterStore, type CounterStore } from '../../../src/limits/throttle.js'
import { TEST_REDIS_URL, uniquePrefix } from '../../redis/helper.js'

/* The reservation semantics of the failure throttle, on both counter stores. */

async function redisStore (t: Test): Promise<CounterStore> {
  const redis = createRedis(TEST_REDIS_URL, { down: () => {}, up: () => {} })
  t.teardown(() => { redis.disconnect() })
  if (redis.status !== 'ready') await new Promise((resolve) => { redis.once('ready', resolve) })
  return new RedisCounterStore(redis, uniquePrefix(t))
}

const stores: Array<[string, (t: Test) => Promise<CounterStore>]> = [
  ['memory', async () => new MemoryCounterStore()],
  ['Redis', redisStore]
]

for (const [name, make] of stores) {
  t.test(`reserve counts only under the limit, and release gives one back (${name})`, async (t) => {
    const store = await make(t)
    const taken = await Promise.all(Array.from({ length: 6 }, async () => await store.reserve('k', 4, 60_000)))
    t.same(taken.map((c) => c.allowed).sort(), [false, false, true, true, true, true])
    t.equal((await store.peek('k'))?.count, 4, 'a refused reservation is not counted')
    await store.release('k')
    t.equal((await store.peek('k'))?.count, 3)
    t.equal((await store.reserve('k', 4, 60_000)).allowed, true, 'the place given back can be taken again')
    for (let i = 0; i < 4; i++) await store.release('k')
    t.equal(await store.peek('k'), undefined, 'the last hit given back ends the window')
    await store.release('k')
    t.equal(await store.peek('k'), undefined, 'releasing nothing stays nothing')
  })

  t.test(`a check that throws gives its attempt back; a failed one keeps it; a success resets (${name})`, async (t) => {
    const store = await make(t)
    const throttle = new FailureThrottle({ store, limits: { max: 2, windowMs: 60_000, accountMax: 100, accountWindowMs: 60_000, ipv6Prefix: 64 }, name: 'login_failures' })
    const attempt = async (ok: boolean) => await throttle.attempt('s', '192.0.2.1', async () => ({ ok }))
    await t.rejects(throttle.attempt('s', '192.0.2.1', async () => { throw new Error('database down') }), { message: 'database down' })
    t.equal(await store.peek('s:192.0.2.1'), undefined, 'an error is not a guess')
    t.equal(await store.peek('s'), undefined, 'for the account count either')
    t.same(await attempt(false), { ok: false })
    t.equal((await store.peek('s:192.0.2.1'))?.count, 1)
    t.equal((await store.peek('s'))?.count, 1)
    t.same(await attempt(true), { ok: true })
    t.equal(await store.peek('s:192.0.2.1'), undefined, 'a success resets the pair')
    t.equal((await store.peek('s'))?.count, 1, 'and gives back only its own place in the account count')
    for (let i = 0; i < 2; i++) await attempt(false)
    t.equal((await store.peek('s'))?.count, 1, 'failures from an address that succeeded do not count towards the account')
    await t.rejects(attempt(true), { statusCode: 429, code: 'RATE_LIMITED' })
  })
}

/* The in-memory store is bounded (MEMORY_LIMIT counters); what it evicts decides whether a flood can free a lock. */
const LIMITS = { max: 5, windowMs: 60_000, accountMax: 50, accountWindowMs: 60_000, ipv6Prefix: 64 }

t.test('in memory, a locked subject survives a flood of sign-ins for random emails, and the counters stay bounded', async (t) => {
  const store = new MemoryCounterStore()
  const throttle = new FailureThrottle({ store, limits: LIMITS, name: 'login_failures' })
  const fail = async (subject: string, ip: string) => await throttle.attempt(subject, ip, async () => ({ ok: false }))
  for (let i = 0; i < 5; i++) await fail('victim@example.com', '198.51.100.7')
  await t.rejects(fail('victim@example.com', '198.51.100.7'), { statusCode: 429, code: 'RATE_LIMITED' }, 'locked')
  for (let i = 0; i < 3; i++) await fail('guessed@example.com', '203.0.113.50')

  // each attempt makes two counters (the pair and the account): 60,000 attempts make 120,000
  for (let i = 0; i < 60_000; i++) await fail(`flood-${i}@example.com`, `203.0.113.${i % 250}`)

  t.ok(store.size <= 100_000, `bounded: ${store.size} counters`)
  await t.rejects(fail('victim@example.com', '198.51.100.7'), { statusCode: 429, code: 'RATE_LIMITED' }, 'the victim\'s pair is still locked')
  t.equal((await store.peek('guessed@example.com:203.0.113.50'))?.count, 3, 'a subject failed on repeatedly outlives one-attempt keys')
  t.equal(await store.peek('flood-0@example.com:203.0.113.0'), undefined, 'the oldest one-attempt keys went')
})

t.test('in memory, when every live counter is locked the oldest locked ones go, so memory stays bounded', async (t) => {
  const store = new MemoryCounterStore()
  for (let i = 0; i <= 100_000; i++) await store.reserve(`locked-${i}`, 1, 60_000)
  t.ok(store.size <= 100_000, `bounded: ${store.size} counters`)
  t.equal(await store.peek('locked-0'), undefined, 'the oldest went')
  t.equal((await store.reserve('locked-100000', 1, 60_000)).allowed, false, 'the newest is still locked')
})
