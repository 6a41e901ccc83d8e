import { RateLimited } from './errors.js'

export interface Counter { count: number, resetAt: number }

/**
 * Fixed-window counters. In memory for one process; a shared implementation (Redis) makes
 * the limits hold across instances.
 */
export interface CounterStore {
  /** Counts one more hit; the window starts at the first hit. */
  hit (key: string, windowMs: number): Promise<Counter>
  /** Counts one more hit only while the count is under `max`, atomically; `allowed` says whether it did. */
  reserve (key: string, max: number, windowMs: number): Promise<Counter & { allowed: boolean }>
  /** Takes one hit back (a reservation that turned out not to count), keeping the window. */
  release (key: string): Promise<void>
  peek (key: string): Promise<Counter | undefined>
  reset (key: string): Promise<void>
}

const MEMORY_LIMIT = 100_000

export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, Counter>()

  async hit (key: string, windowMs: number): Promise<Counter> {
    const { count, resetAt } = this.count(key, Number.MAX_SAFE_INTEGER, windowMs)
    return { count, resetAt }
  }

  async reserve (key: string, max: number, windowMs: number): Promise<Counter & { allowed: boolean }> {
    return this.count(key, max, windowMs)
  }

  async release (key: string): Promise<void> {
    const counter = this.counters.get(key)
    if (counter === undefined) return
    if (counter.count <= 1) this.counters.delete(key)
    else counter.count--
  }

  async peek (key: string): Promise<Counter | undefined> {
    const counter = this.counters.get(key)
    return counter === undefined || counter.resetAt <= Date.now() ? undefined : { ...counter }
  }

  async reset (key: string): Promise<void> {
    this.counters.delete(key)
  }

  /** Synchronous, so no other caller can run between the check and the hit. */
  private count (key: string, max: number, windowMs: number): Counter & { allowed: boolean } {
    const now = Date.now()
    let counter = this.counters.get(key)
    if (counter === undefined || counter.resetAt <= now) {
      if (this.counters.size >= MEMORY_LIMIT) this.prune(now)
      counter = { count: 0, resetAt: now + windowMs }
      this.counters.set(key, counter)
    }
    const allowed = counter.count < max
    if (allowed) counter.count++
    return { ...counter, allowed }
  }

  /** Drops expired windows; if all are live, the oldest go, so memory stays bounded. */
  private prune (now: number): void {
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key)
    for (const key of this.counters.keys()) {
      if (this.counters.size < MEMORY_LIMIT) break
      this.counters.delete(key)
    }
  }
}

/** A 429 that tells the client when to come back. */
export function rateLimited (retryAfterSeconds: number): Error {
  return Object.assign(new RateLimited(), { retryAfter: Math.max(1, Math.ceil(retryAfterSeconds)) })
}

/**
 * Failed attempts per key (one email from one address). Each attempt reserves its place in the
 * count *before* the password is hashed, so guesses sent at once cannot all pass a check made
 * before any of them failed: at `max` reservations within the window the key is refused until
 * the window passes. A success resets it; a check that throws (not a guess) gives its place back.
 * Keying by email *and* address means an attacker elsewhere cannot lock a user out of their own address.
 */
export class FailureThrottle {
  constructor (private readonly store: CounterStore, private readonly max: number, private readonly windowMs: number) {}

  /** Runs one password check on a reserved attempt; a result that is not `ok` stays counted as a failure. */
  async attempt<T extends { ok: boolean }> (key: string, check: () => Promise<T>): Promise<T> {
    await this.reserve(key)
    let result: T
    try {
      result = await check()
    } catch (err) {
      await this.store.release(key)
      throw err
    }
    if (result.ok) await this.store.reset(key)
    return result
  }

  async reserve (key: string): Promise<void> {
    const counter = await this.store.reserve(key, this.max, this.windowMs)
    if (!counter.allowed) throw rateLimited((counter.resetAt - Date.now()) / 1000)
  }
}
