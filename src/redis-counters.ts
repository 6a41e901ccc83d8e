import type { Redis, Result } from 'ioredis'
import { MemoryCounterStore, type Counter, type CounterStore } from './throttle.js'

/*
 * One round trip, atomic: the window starts at the first hit (PEXPIRE only then), so every
 * instance sees the same count and the same reset time. A key left without a TTL (a crash
 * between the two calls cannot happen inside a script, but an operator's SET can) gets one.
 */
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`
const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return false end
return {tonumber(count), redis.call('PTTL', KEYS[1])}
`

const RETRY_AFTER_FAILURE_MS = 1000

declare module 'ioredis' {
  interface RedisCommander<Context> {
    gatehouseHit (key: string, windowMs: number): Result<[number, number], Context>
    gatehousePeek (key: string): Result<[number, number] | null, Context>
  }
}

/**
 * Fixed-window counters in Redis, shared by every instance. Fails open: while Redis cannot
 * answer, each instance counts in its own memory (limits per instance rather than none, and
 * never a refused login because a cache is down), and goes back to Redis once it is ready.
 */
export class RedisCounterStore implements CounterStore {
  /** After a failed command (a Redis that hangs stays 'ready'), Redis is skipped until then. */
  private skipUntil = 0

  constructor (
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly fallback: CounterStore = new MemoryCounterStore()
  ) {
    redis.defineCommand('gatehouseHit', { numberOfKeys: 1, lua: HIT })
    redis.defineCommand('gatehousePeek', { numberOfKeys: 1, lua: PEEK })
  }

  /** Whether the counters are shared right now (false while Redis is unreachable). */
  get shared (): boolean {
    return this.redis.status === 'ready' && Date.now() >= this.skipUntil
  }

  async hit (key: string, windowMs: number): Promise<Counter> {
    if (!this.shared) return await this.fallback.hit(key, windowMs)
    try {
      const [count, ttl] = await this.redis.gatehouseHit(this.key(key), windowMs)
      return { count, resetAt: Date.now() + ttl }
    } catch {
      this.failed()
      return await this.fallback.hit(key, windowMs)
    }
  }

  async peek (key: string): Promise<Counter | undefined> {
    if (!this.shared) return await this.fallback.peek(key)
    try {
      const counter = await this.redis.gatehousePeek(this.key(key))
      return counter === null || counter[1] <= 0 ? undefined : { count: counter[0], resetAt: Date.now() + counter[1] }
    } catch {
      this.failed()
      return await this.fallback.peek(key)
    }
  }

  async reset (key: string): Promise<void> {
    // both: a window counted locally during an outage must not outlive a successful login
    await this.fallback.reset(key)
    if (!this.shared) return
    try {
      await this.redis.del(this.key(key))
    } catch {
      // Redis went away mid-call: its window expires on its own
      this.failed()
    }
  }

  /** A command failed or timed out: each request would wait the command timeout, so stop asking for a while. */
  private failed (): void {
    this.skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS
  }

  private key (key: string): string {
    return `${this.prefix}counter:${key}`
  }
}
