import { addressGroup } from './address-group.js'
import { RateLimited } from '../errors.js'
import type { Limiter, ServiceEvents } from '../events.js'

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
/** A full map is pruned down to this, so the pruning pass runs once per 10,000 new keys, not per key. */
const PRUNED_SIZE = 90_000

/** A counter and the ceiling its last reservation was checked against (`hit` has none): at it, the key is locked. */
interface HeldCounter extends Counter { max: number }

export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, HeldCounter>()

  /** How many counters are held (expired ones included until the next pruning). */
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
   * Makes room, memory staying bounded: expired windows first; then the live counters with the
   * fewest hits, oldest first, so a flood of one-attempt keys (sign-ins for random emails) goes
   * before a subject someone failed on repeatedly; and never a locked one (at its ceiling) while
   * an unlocked one is left, so a flood cannot free a lock. Only when every live counter is locked
   * (100,000 subjects each failed to the limit within their window) do the oldest locked ones go.
   */
  private prune (now: number): void {
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key)
    let excess = this.counters.size - PRUNED_SIZE
    if (excess <= 0) return
    const unlocked = [...this.counters.values()].filter((c) => c.count < c.max).map((c) => c.count).sort((a, b) => a - b)
    // the counts below `threshold` all go, and the oldest of those at it until enough went
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

/** A 429 that tells the client when to come back. */
export function rateLimited (retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds)
}

export interface FailureLimits {
  /** failures per subject from one client address, within `windowMs` */
  max: number
  windowMs: number
  /** failures per subject from every address that is not its own, within `accountWindowMs` */
  accountMax: number
  accountWindowMs: number
  /** IPv6 clients are counted by this many leading bits of their address */
  ipv6Prefix: number
}

export interface FailureThrottleOptions {
  store: CounterStore
  limits: FailureLimits
  /** the limiter a refusal is reported under */
  name: Limiter
  events?: ServiceEvents | undefined
  /** the subjects' own addresses; a store of their own, so a flood of counters cannot evict them (default: `store`) */
  owned?: CounterStore | undefined
}

/** How long a successful check makes its address the subject's own. */
const OWN_ADDRESS_MS = 30 * 86_400_000

/**
 * Failed password checks of a subject (an email signing in, a user's current password), counted
 * twice. Per subject and client address (an IPv6 client by its subnet): at `max` within the
 * window that pair is refused, even the right password, so an attacker elsewhere cannot lock a
 * user out of their own address. And per subject across addresses (`accountMax`), so a guesser
 * spread over many addresses is stopped too. A refusal is reported as a `throttled` event under
 * the throttle's name.
 *
 * The account ceiling's trade-off: once it is reached, an address the subject succeeded from in
 * the last 30 days still gets in (its failures never count towards the ceiling; only its own
 * per-address limit applies), and every other address gets 429 until the account window passes.
 * An attacker can thus make the real user wait on a *new* address (a hotel, a mobile network)
 * for up to the account window, but cannot lock them out of where they signed in before; one on
 * the user's own network (same IPv4, same IPv6 subnet) has only the per-address budget. A
 * progressive delay was rejected: it costs nothing to an attacker who sends in parallel.
 *
 * Each attempt reserves its place in both counts *before* the password is hashed, so guesses
 * sent at once cannot all pass a check made before any of them failed. A success — a completed
 * sign-in, never a right password that only earns the second-factor challenge — resets the
 * pair and gives the account count its place back (other addresses may still be guessing); a
 * check that throws (not a guess) gives both back.
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

  /**
   * Runs one check on reserved places; a result that is not `ok` stays counted as a failure. An
   * `ok` result that is `pending` (a right password that only earns the second-factor challenge)
   * is neither: its places are given back and nothing is reset, until `completed` says so.
   */
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

  /** Whether the subject completed a check from this address (its address group) in the last 30 days. */
  async isOwn (subject: string, ip: string): Promise<boolean> {
    return await this.owned.peek(`own:${subject}:${addressGroup(ip, this.limits.ipv6Prefix)}`) !== undefined
  }

  /** A sign-in that a pending check began has completed (its second factor proven elsewhere): the success `attempt` did not count. */
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

/** The two failure throttles of sign-in (login) and of password re-checks (change-password, 2FA management). */
export interface AuthThrottles { login: FailureThrottle, password: FailureThrottle }
