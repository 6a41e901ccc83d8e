import type { Claims } from './claims.js'

interface Entry<C> { token: string, claims: C, expiresAtMs: number, bytes: number }

const ENTRY_OVERHEAD_BYTES = 512

export interface CacheLimits { maxEntries: number, maxBytes: number }

/**
 * Filed under the signature's last 32 characters (192 bits, docs/benchmarks.md); a hit is then
 * confirmed against the whole token, so a forgery copying a real token's end is a miss.
 */
const KEY_LENGTH = 32

const keyOf = (token: string): string => token.slice(-KEY_LENGTH)

/**
 * Only successes are stored, so an attacker's forgeries never are; never served at or after exp.
 * `C`: the claims kept (§3's, or the OpenID Connect provider's access tokens).
 */
export class VerifiedTokenCache<C extends { exp: number } = Claims> {
  private readonly entries = new Map<string, Entry<C>>()
  private totalBytes = 0

  constructor (private readonly limits: CacheLimits) {}

  get (token: string, nowMs: number): C | undefined {
    const key = keyOf(token)
    const entry = this.entries.get(key)
    if (entry?.token !== token) return undefined
    if (entry.expiresAtMs > nowMs) return entry.claims
    this.remove(key, entry)
    return undefined
  }

  has (token: string): boolean {
    return this.entries.get(keyOf(token))?.token === token
  }

  set (token: string, claims: C): void {
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

  private remove (key: string, entry: Entry<C>): void {
    this.entries.delete(key)
    this.totalBytes -= entry.bytes
  }
}
