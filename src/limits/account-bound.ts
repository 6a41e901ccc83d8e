import type { Limiter, ServiceEvents } from '../events.js'
import { rateLimited, type CounterStore } from './throttle.js'

export interface AccountBoundOptions {
  store: CounterStore
  /** failures per account within `windowMs`, from every address together */
  max: number
  windowMs: number
  /** the limiter a refusal is reported under, and the prefix of its counter keys */
  name: Limiter
  events?: ServiceEvents | undefined
}

/** One reserved attempt: whether it fit under the bound, and the count it made (`max` exactly: the failure that reaches the bound). */
export interface BoundSlot { allowed: boolean, count: number, resetAt: number }

/**
 * Failures per account, whatever the address (docs/security.md, "Second factors"): the bound a
 * guesser spread over many addresses meets. Each attempt reserves its place *before* the check,
 * so attempts sent at once cannot all pass a count read before any of them failed; a success
 * gives its place back (a failure keeps it). What to do once the bound is reached — refuse, or
 * still check a proof a guesser cannot reach — is the caller's decision.
 */
export class AccountBound {
  constructor (private readonly options: AccountBoundOptions) {}

  get max (): number {
    return this.options.max
  }

  async reserve (account: string): Promise<BoundSlot> {
    const { count, resetAt, allowed } = await this.options.store.reserve(this.key(account), this.options.max, this.options.windowMs)
    return { allowed, count, resetAt }
  }

  /** Gives a reserved place back: the attempt succeeded, or was no attempt. */
  async release (account: string, slot: BoundSlot): Promise<void> {
    if (slot.allowed) await this.options.store.release(this.key(account))
  }

  /** The 429 of a reached bound, reported as a `throttled` event under the bound's name. */
  refuse (slot: BoundSlot): never {
    this.options.events?.emit('throttled', { limiter: this.options.name })
    throw rateLimited((slot.resetAt - Date.now()) / 1000)
  }

  private key (account: string): string {
    return `${this.options.name}:${account}`
  }
}
