import t, { type Test } from 'tap'
import { createRedis } from '../../src/redis.js'
import { RedisCounterStore } from '../../src/redis-counters.js'
import { FailureThrottle, MemoryCounterStore, type CounterStore } from '../../src/throttle.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis-helper.js'

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
    const throttle = new FailureThrottle(store, 2, 60_000)
    await t.rejects(throttle.attempt('k', async () => { throw new Error('database down') }), { message: 'database down' })
    t.equal(await store.peek('k'), undefined, 'an error is not a guess')
    t.same(await throttle.attempt('k', async () => ({ ok: false })), { ok: false })
    t.equal((await store.peek('k'))?.count, 1)
    t.same(await throttle.attempt('k', async () => ({ ok: true })), { ok: true })
    t.equal(await store.peek('k'), undefined)
    for (let i = 0; i < 2; i++) await throttle.attempt('k', async () => ({ ok: false }))
    await t.rejects(throttle.attempt('k', async () => ({ ok: true })), { statusCode: 429, code: 'RATE_LIMITED' })
  })
}
