import { RateLimited } from './errors.js'
import type { Limiter, ServiceEvents } from './services/events.js'

export interface Counter { count: number, resetAt: number }

/**
 * Fixed-window counters. In memory for one process; a shared implementation (Redis) makes
 * the limits hold across instances.
 */
export interface CounterStore {
  /** Counts one more hit; the window starts at the first hit. */
  hit (key: string, windowMs: number): Promise<Counter>
  peek (key: string): Promise<Counter | undefined>
  reset (key: string): Promise<void>
}

const MEMORY_LIMIT = 100_000

export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, Counter>()

  async hit (key: string, windowMs: number): Promise<Counter> {
    const now = Date.now()
    let counter = this.counters.get(key)
    if (counter === undefined || counter.resetAt <= now) {
      if (this.counters.size >= MEMORY_LIMIT) this.prune(now)
      counter = { count: 0, resetAt: now + windowMs }
      this.counters.set(key, counter)
    }
    counter.count++
    return { ...counter }
  }

  async peek (key: string): Promise<Counter | undefined> {
    const counter = this.counters.get(key)
    return counter === undefined || counter.resetAt <= Date.now() ? undefined : { ...counter }
  }

  async reset (key: string): Promise<void> {
    this.counters.delete(key)
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
export function rateLimited (retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds)
}

/**
 * Failed attempts per key (docs/security.md: one email from one address). At `max` failures within the
 * window, the key is refused — before any password is hashed — until the window passes; a
 * success resets it. Keying by email *and* address means an attacker elsewhere cannot lock a
 * user out of their own address. A refusal is reported as a `throttled` event under the
 * throttle's name.
 */
export class FailureThrottle {
  constructor (
    private readonly store: CounterStore,
    private readonly max: number,
    private readonly windowMs: number,
    readonly name: Limiter,
    private readonly events?: ServiceEvents
  ) {}

  async assertAllowed (key: string): Promise<void> {
    const counter = await this.store.peek(key)
    if (counter !== undefined && counter.count >= this.max) {
      this.events?.emit('throttled', { limiter: this.name })
      throw rateLimited((counter.resetAt - Date.now()) / 1000)
    }
  }

  async recordFailure (key: string): Promise<void> {
    await this.store.hit(key, this.windowMs)
  }

  async reset (key: string): Promise<void> {
    await this.store.reset(key)
  }
}
