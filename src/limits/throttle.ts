import { addressGroup } from './address-group.js'
import { RateLimited } from '../errors.js'
import type { Limiter, ServiceEvents } from '../events.js'

export interface Counter { count: number, resetAt: number }

/** Fixed-window counters; a shared store (Redis) makes the limits hold across instances. */
export interface CounterStore {
  hit (key: string, windowMs: number): Promise<Counter>
  /** Atomic: counts only while under `max`. */
  reserve (key: string, max: number, windowMs: number): Promise<Counter & { allowed: boolean }>
  release (key: string): Promise<void>
  peek (key: string): Promise<Counter | undefined>
  reset (key: string): Promise<void>
}

const MEMORY_LIMIT = 100_000
// pruning to below the limit runs the pass once per 10,000 new keys, not per key
const PRUNED_SIZE = 90_000

interface HeldCounter extends Counter { max: number }

export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, HeldCounter>()

  get size (): number {
    return this.counters.size
  }

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
    return counter === undefined || counter.resetAt <= Date.now() ? undefined : { count: counter.count, resetAt: counter.resetAt }
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
      counter = { count: 0, resetAt: now + windowMs, max }
      this.counters.set(key, counter)
    }
    counter.max = max
    const allowed = counter.count < max
    if (allowed) counter.count++
    return { count: counter.count, resetAt: counter.resetAt, allowed }
  }

  /**
   * Expired windows go first, then the fewest hits, oldest first; a locked counter only when no
   * unlocked one is left, so a flood of one-attempt keys cannot free a lock.
   */
  private prune (now: number): void {
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key)
    let excess = this.counters.size - PRUNED_SIZE
    if (excess <= 0) return
    const unlocked = [...this.counters.values()].filter((c) => c.count < c.max).map((c) => c.count).sort((a, b) => a - b)
    const threshold = unlocked[Math.min(excess, unlocked.length) - 1] ?? 0
    let atThreshold = excess - unlocked.filter((count) => count < threshold).length
    for (const [key, counter] of this.counters) {
      if (excess <= 0) return
      if (counter.count >= counter.max || counter.count > threshold || (counter.count === threshold && atThreshold-- <= 0)) continue
      this.counters.delete(key)
      excess--
    }
    for (const key of this.counters.keys()) {
      if (excess-- <= 0) return
      this.counters.delete(key)
    }
  }
}

export function rateLimited (retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds)
}

export interface FailureLimits {
  max: number
  windowMs: number
  accountMax: number
  accountWindowMs: number
  ipv6Prefix: number
}

export interface FailureThrottleOptions {
  store: CounterStore
  limits: FailureLimits
  name: Limiter
  events?: ServiceEvents | undefined
  /** a store of their own, so a flood of counters cannot evict them */
  owned?: CounterStore | undefined
}

const OWN_ADDRESS_MS = 30 * 86_400_000

/**
 * Failed password checks, counted per subject and address (so an attacker elsewhere cannot lock a
 * user out of their own address) and per subject across addresses (a spread-out guesser).
 * Once the account ceiling is reached, an address the subject succeeded from in the last 30
 * days still gets in; a progressive delay was rejected: it costs nothing to a parallel attacker.
 * Places are reserved before hashing, so guesses sent at once cannot all pass one check.
 */
export class FailureThrottle {
  private readonly store: CounterStore
  private readonly limits: FailureLimits
  readonly name: Limiter
  private readonly events: ServiceEvents | undefined
  private readonly owned: CounterStore

  constructor (options: FailureThrottleOptions) {
    this.store = options.store
    this.limits = options.limits
    this.name = options.name
    this.events = options.events
    this.owned = options.owned ?? options.store
  }

  /** A `pending` ok (a right password awaiting the second factor) gives its places back and resets nothing. */
  async attempt<T extends { ok: boolean, pending?: boolean }> (subject: string, ip: string, check: () => Promise<T>): Promise<T> {
    const pair = `${subject}:${addressGroup(ip, this.limits.ipv6Prefix)}`
    const own = await this.owned.peek(`own:${pair}`) !== undefined
    await this.reserve(pair, this.limits.max, this.limits.windowMs)
    const held = [pair]
    let result: T
    try {
      if (!own) {
        await this.reserve(subject, this.limits.accountMax, this.limits.accountWindowMs)
        held.push(subject)
      }
      result = await check()
    } catch (err) {
      for (const key of held) await this.store.release(key)
      throw err
    }
    if (result.ok && result.pending === true) {
      for (const key of held) await this.store.release(key)
    } else if (result.ok) {
      await this.succeeded(pair, own ? undefined : subject)
    }
    return result
  }

  async isOwn (subject: string, ip: string): Promise<boolean> {
    return await this.owned.peek(`own:${subject}:${addressGroup(ip, this.limits.ipv6Prefix)}`) !== undefined
  }

  async completed (subject: string, ip: string): Promise<void> {
    const pair = `${subject}:${addressGroup(ip, this.limits.ipv6Prefix)}`
    await this.store.reset(pair)
    await this.markOwn(pair)
  }

  private async reserve (key: string, max: number, windowMs: number): Promise<void> {
    const counter = await this.store.reserve(key, max, windowMs)
    if (!counter.allowed) {
      this.events?.emit('throttled', { limiter: this.name })
      throw rateLimited((counter.resetAt - Date.now()) / 1000)
    }
  }

  private async succeeded (pair: string, account: string | undefined): Promise<void> {
    await this.store.reset(pair)
    if (account !== undefined) await this.store.release(account)
    await this.markOwn(pair)
  }

  private async markOwn (pair: string): Promise<void> {
    // reset, then hit: a fixed window would otherwise end 30 days after the *first* success
    await this.owned.reset(`own:${pair}`)
    await this.owned.hit(`own:${pair}`, OWN_ADDRESS_MS)
  }
}

export interface AuthThrottles { login: FailureThrottle, password: FailureThrottle }
