import type { Claims } from './claims.js'

interface Entry { token: string, claims: Claims, expiresAtMs: number, bytes: number }

/** What an entry costs beyond its token's characters: the claims object and the Map slot. */
const ENTRY_OVERHEAD_BYTES = 512

export interface CacheLimits { maxEntries: number, maxBytes: number }

/**
 * The characters of a token's end its entry is filed under: the last 32 characters of its
 * signature, 192 bits that no two tokens this service signs share. A Map keyed by the whole
 * token hashed its 600 characters on every request, as each arrives as a new string; a hit is
 * then confirmed by comparing the whole token, so a forgery that copies a real token's end is a
 * miss like any other.
 */
const KEY_LENGTH = 32

const keyOf = (token: string): string => token.slice(-KEY_LENGTH)

/**
 * Tokens that verified: a hit is one Map lookup and one string comparison, no cryptography.
 * Only successes are stored (an attacker's forgeries never are), so every entry is a token this
 * service signed; bounded by entries and by bytes all the same, the oldest leaving first. An
 * entry is never served at or after its token's exp.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>()
  private totalBytes = 0

  constructor (private readonly limits: CacheLimits) {}

  get (token: string, nowMs: number): Claims | undefined {
    const key = keyOf(token)
    const entry = this.entries.get(key)
    if (entry?.token !== token) return undefined
    if (entry.expiresAtMs > nowMs) return entry.claims
    this.remove(key, entry)
    return undefined
  }

  /** True when `token` is one that verified here (expired or not): a well-formed token, as it was signed. */
  has (token: string): boolean {
    return this.entries.get(keyOf(token))?.token === token
  }

  set (token: string, claims: Claims): void {
    const bytes = token.length + ENTRY_OVERHEAD_BYTES
    if (this.limits.maxEntries <= 0 || bytes > this.limits.maxBytes || this.has(token)) return
    const key = keyOf(token)
    const taken = this.entries.get(key)
    if (taken !== undefined) this.remove(key, taken)
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size < this.limits.maxEntries && this.totalBytes + bytes <= this.limits.maxBytes) break
      this.remove(oldest, entry)
    }
    this.entries.set(key, { token, claims, expiresAtMs: claims.exp * 1000, bytes })
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

  private remove (key: string, entry: Entry): void {
    this.entries.delete(key)
    this.totalBytes -= entry.bytes
  }
}
