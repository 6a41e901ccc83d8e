import type { Claims } from './tokens.js'

interface Entry { claims: Claims, expiresAtMs: number, bytes: number }

/** What an entry costs beyond its token's characters: the claims object and the Map slot. */
const ENTRY_OVERHEAD_BYTES = 512

export interface CacheLimits { maxEntries: number, maxBytes: number }

/**
 * Tokens that verified, keyed by the token string itself: a hit is one Map lookup, no hashing.
 * Only successes are stored (an attacker's forgeries never are), so every key is a token this
 * service signed; bounded by entries and by bytes all the same, the oldest leaving first. An
 * entry is never served at or after its token's exp.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>()
  private totalBytes = 0

  constructor (private readonly limits: CacheLimits) {}

  get (token: string, nowMs: number): Claims | undefined {
    const entry = this.entries.get(token)
    if (entry === undefined) return undefined
    if (entry.expiresAtMs > nowMs) return entry.claims
    this.remove(token, entry)
    return undefined
  }

  set (token: string, claims: Claims): void {
    const bytes = token.length + ENTRY_OVERHEAD_BYTES
    if (this.limits.maxEntries <= 0 || bytes > this.limits.maxBytes || this.entries.has(token)) return
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size < this.limits.maxEntries && this.totalBytes + bytes <= this.limits.maxBytes) break
      this.remove(oldest, entry)
    }
    this.entries.set(token, { claims, expiresAtMs: claims.exp * 1000, bytes })
    this.totalBytes += bytes
  }

  /** Forgets every entry (a signing key was revoked: what it signed must be verified again). */
  clear (): void {
    this.entries.clear()
    this.totalBytes = 0
  }

  get size (): number {
    return this.entries.size
  }

  get bytes (): number {
    return this.totalBytes
  }

  private remove (token: string, entry: Entry): void {
    this.entries.delete(token)
    this.totalBytes -= entry.bytes
  }
}
