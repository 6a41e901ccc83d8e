import type { Redis, Result } from 'ioredis'
import { MemoryCounterStore, type Counter, type CounterStore } from './throttle.js'

/*
 * Atomic in one round trip; PEXPIRE only at the first hit, so every instance sees the same reset
 * time. A key without a TTL (an operator's SET) gets one.
 */
const RESERVE = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[2]) then
  count = redis.call('INCR', KEYS[1])
  allowed = 1
end
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {allowed, count, ttl}
`
/* DECR keeps the TTL; the last hit taken back removes the key. */
const RELEASE = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 1 then redis.call('DECR', KEYS[1]) elseif count == 1 then redis.call('DEL', KEYS[1]) end
return 0
`
const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return false end
return {tonumber(count), redis.call('PTTL', KEYS[1])}
`

const RETRY_AFTER_FAILURE_MS = 1000

declare module 'ioredis' {
  interface RedisCommander<Context> {
    gatehousePeek (key: string): Result<[number, number] | null, Context>
    gatehouseReserve (key: string, windowMs: number, max: number): Result<[number, number, number], Context>
    gatehouseRelease (key: string): Result<number, Context>
  }
}

/** Fails open to per-instance memory while Redis cannot answer: never a refused login because a cache is down. */
export class RedisCounterStore implements CounterStore {
  /** A Redis that hangs stays 'ready', so after a failed command it is skipped until then. */
  private skipUntil = 0

  constructor (
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly fallback: CounterStore = new MemoryCounterStore()
  ) {
    redis.defineCommand('gatehousePeek', { numberOfKeys: 1, lua: PEEK })
    redis.defineCommand('gatehouseReserve', { numberOfKeys: 1, lua: RESERVE })
    redis.defineCommand('gatehouseRelease', { numberOfKeys: 1, lua: RELEASE })
  }

  get shared (): boolean {
    return this.redis.status === 'ready' && Date.now() >= this.skipUntil
  }

  async hit (key: string, windowMs: number): Promise<Counter> {
    const { count, resetAt } = await this.reserve(key, Number.MAX_SAFE_INTEGER, windowMs)
    return { count, resetAt }
  }

  async reserve (key: string, max: number, windowMs: number): Promise<Counter & { allowed: boolean }> {
    if (!this.shared) return await this.fallback.reserve(key, max, windowMs)
    try {
      const [allowed, count, ttl] = await this.redis.gatehouseReserve(this.key(key), windowMs, max)
      return { allowed: allowed === 1, count, resetAt: Date.now() + ttl }
    } catch {
      this.failed()
      return await this.fallback.reserve(key, max, windowMs)
    }
  }

  async release (key: string): Promise<void> {
    if (!this.shared) return await this.fallback.release(key)
    try {
      await this.redis.gatehouseRelease(this.key(key))
    } catch {
      // Redis went away mid-call: the hit stays counted until its window ends
      this.failed()
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

  private failed (): void {
    this.skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS
  }

  private key (key: string): string {
    return `${this.prefix}counter:${key}`
  }
}
