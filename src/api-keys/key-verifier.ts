import { timingSafeEqual } from 'node:crypto'
import type { Store } from '../db/store.js'
import { RateLimited, TokenExpired, TokenInvalid, TokenRevoked } from '../errors.js'
import type { KeyedHash } from '../crypto/keyed-hash.js'
import type { CounterStore } from '../limits/throttle.js'
import type { CoreLogger } from '../logging/logger.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'
import type { Claims } from '../tokens/claims.js'
import { keyIdOf } from './format.js'
import { entryOf, SharedValues, type KeyEntry } from './key-entry.js'

/** last_used_at is written at most this often per key (and by one instance: the update's condition) */
export const TOUCH_INTERVAL_MS = 60_000

/** Ended keys no one presented since the previous sweep leave memory this often at most (a sweep runs when a read adds a key). */
export const SWEEP_INTERVAL_MS = 60_000

export interface VerifierOptions {
  store: Store
  index: RevocationIndex
  /** the keyed hash of each data key, by its id */
  hashers: ReadonlyMap<string, KeyedHash>
  issuer: string
  log: Pick<CoreLogger, 'error'>
  /** API_KEY_RATE_LIMIT over the shared counters; undefined: no limit */
  limit?: { counters: CounterStore, max: number, windowMs: number, refused: () => void } | undefined
}

/** Constant time for two strings of one length (keyIdOf has checked the presented one's). */
function sameKey (a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Checks a presented key: its shape and checksum first (no lookup for a made-up key), then the
 * entry by id in memory (a miss reads the database once), the keyed hash in constant time, the
 * revocation index, the expiry. An ended key (revoked, expired) stays held with its state, so a
 * client still presenting it is answered from memory, after the keyed hash as any other (a wrong
 * secret stays token_invalid). What bounds the map: only keys whose row was read are held (a
 * made-up id never is), and an ended one leaves at the first sweep it was not presented before; a
 * key whose row went with its owner is remembered only by id while its revocation is in the index.
 * No database write on the request: last_used_at goes out afterwards, once a minute at most.
 * Synchronous when the key is in memory and no rate limit applies.
 */
export class ApiKeyVerifier {
  private readonly entries = new Map<string, KeyEntry>()
  /** ids whose row is gone (its owner deleted) while the index holds their revocation: refused without a read */
  private readonly gone = new Set<string>()
  private readonly loading = new Map<string, Promise<KeyEntry | undefined>>()
  private readonly shared = new SharedValues()
  private sweptAt = Date.now()

  constructor (private readonly options: VerifierOptions) {}

  get size (): number {
    return this.entries.size
  }

  verify (token: string): Claims | Promise<Claims> {
    const id = keyIdOf(token)
    if (id === undefined) throw new TokenInvalid()
    const entry = this.entries.get(id)
    if (entry !== undefined) return this.admit(entry, token)
    if (this.gone.has(id) && this.options.index.has(id)) throw new TokenRevoked()
    return this.load(id).then((loaded) => {
      if (loaded === undefined) throw new TokenInvalid()
      return this.admit(loaded, token)
    })
  }

  forget (id: string): void {
    this.entries.delete(id)
    this.gone.delete(id)
  }

  private admit (entry: KeyEntry, token: string): Claims | Promise<Claims> {
    if (entry.verified === undefined || !sameKey(token, entry.verified)) {
      const hasher = this.options.hashers.get(entry.hashKeyId)
      if (hasher === undefined || !timingSafeEqual(hasher.digest(token), entry.hash)) throw new TokenInvalid()
      entry.verified = token
    }
    const now = Date.now()
    if (entry.revoked || this.options.index.has(entry.id)) {
      // once revoked, always: the index forgets the key after its expiry, this entry need not
      entry.revoked = true
      entry.refusedAt = now
      throw new TokenRevoked()
    }
    if (entry.expiresAtMs <= now) {
      entry.refusedAt = now
      throw new TokenExpired()
    }
    if (now - entry.touchedAt >= TOUCH_INTERVAL_MS) this.touch(entry, now)
    const limit = this.options.limit
    return limit === undefined ? entry.claims : this.counted(entry, limit)
  }

  private async counted (entry: KeyEntry, limit: NonNullable<VerifierOptions['limit']>): Promise<Claims> {
    const { count, resetAt } = await limit.counters.hit(`api-key:${entry.id}`, limit.windowMs)
    if (count <= limit.max) return entry.claims
    limit.refused()
    throw new RateLimited((resetAt - Date.now()) / 1000)
  }

  /** Concurrent misses for one id share one read. */
  private async load (id: string): Promise<KeyEntry | undefined> {
    let pending = this.loading.get(id)
    if (pending === undefined) {
      pending = this.read(id).finally(() => { this.loading.delete(id) })
      this.loading.set(id, pending)
    }
    return await pending
  }

  private async read (id: string): Promise<KeyEntry | undefined> {
    const key = await this.options.store.apiKeys.findOwned(id)
    const now = Date.now()
    if (now - this.sweptAt >= SWEEP_INTERVAL_MS) this.sweep(now)
    // a deleted owner's keys are gone with it, their revocations stay: refused as revoked, not unknown
    if (key === undefined && this.options.index.has(id)) {
      this.gone.add(id)
      throw new TokenRevoked()
    }
    if (key === undefined) return undefined
    const entry = entryOf(this.shared.key(key), this.options.issuer)
    this.entries.set(id, entry)
    return entry
  }

  /** Drops the ended keys not presented since the previous sweep, and the gone ids the index has forgotten. */
  private sweep (now: number): void {
    for (const [id, entry] of this.entries) {
      const ended = entry.revoked || entry.expiresAtMs <= now || this.options.index.has(id)
      if (ended && entry.refusedAt < this.sweptAt) this.entries.delete(id)
    }
    for (const id of this.gone) {
      if (!this.options.index.has(id)) this.gone.delete(id)
    }
    this.sweptAt = now
  }

  private touch (entry: KeyEntry, now: number): void {
    entry.touchedAt = now
    setImmediate(() => {
      this.options.store.apiKeys.touch(entry.id, new Date(now).toISOString(), new Date(now - TOUCH_INTERVAL_MS).toISOString())
        .catch((err: unknown) => { this.options.log.error({ err }, 'recording an API key\'s last use failed') })
    })
  }
}
