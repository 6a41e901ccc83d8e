import type { StoredSigningKey } from '../db/signing-keys.js'

export type KeyState = 'next' | 'current' | 'previous' | 'revoked' | 'gone'

const ms = (time: string | null): number => time === null ? Infinity : Date.parse(time)

/**
 * The stored `activates_at` of the standby: a `next` key published from the start and after every
 * promotion, that signs only when it is promoted (a revocation of the current key). The column
 * is required, so "never on its own" is the last representable instant; the API shows `null`.
 */
export const STANDBY = '9999-12-31T23:59:59.999Z'

export const isStandby = (key: Pick<StoredSigningKey, 'activatesAt' | 'revokedAt'>): boolean => key.revokedAt === null && key.activatesAt === STANDBY

/**
 * The key a revocation of the current key promotes: of the live `next` keys, the one published
 * longest (the lowest `seq`), which every verifier has had the most time to fetch — the standby,
 * unless a rotation's key is older.
 */
export function promotable<K extends Pick<StoredSigningKey, 'seq' | 'activatesAt' | 'revokedAt'>> (keys: readonly K[], nowMs: number): K | undefined {
  return keys.filter((k) => k.revokedAt === null && ms(k.activatesAt) > nowMs).sort((a, b) => a.seq - b.seq)[0]
}

/**
 * The key that signs at `nowMs`: of the keys not revoked, the one activated last (ties: the later
 * one). Every instance reads the same rows, so every instance picks the same key.
 */
export function currentKey<K extends Pick<StoredSigningKey, 'seq' | 'activatesAt' | 'revokedAt'>> (keys: readonly K[], nowMs: number): K | undefined {
  let current: K | undefined
  for (const key of keys) {
    if (key.revokedAt !== null || ms(key.activatesAt) > nowMs) continue
    if (current === undefined || ms(key.activatesAt) > ms(current.activatesAt) ||
      (ms(key.activatesAt) === ms(current.activatesAt) && key.seq > current.seq)) current = key
  }
  return current
}

/**
 * next (published, not yet signing) → current → previous (published until `retiresAt`, when its
 * last token has expired and every cached key set has let it go) → gone. A revoked key is listed
 * (never published, never accepted) until the time it would have been gone.
 */
export function keyState (key: StoredSigningKey, current: StoredSigningKey | undefined, nowMs: number): KeyState {
  const retired = ms(key.retiresAt) <= nowMs
  if (key.revokedAt !== null) return retired ? 'gone' : 'revoked'
  if (key === current) return 'current'
  if (ms(key.activatesAt) > nowMs) return 'next'
  return retired || key.retiresAt === null ? 'gone' : 'previous'
}

/**
 * The retirement time each live key should have: its successor's activation plus how long a
 * token it signed and a cached key set can live; the last key in line (and the standby) has none. Keys already
 * gone keep theirs, and none is brought forward. Returns only the keys whose stored time differs.
 */
export function relink (keys: readonly StoredSigningKey[], lingerMs: number, nowMs: number): Array<{ kid: string, retiresAt: string | null }> {
  // a standby succeeds no key until it is promoted
  const live = keys.filter((k) => k.revokedAt === null && ms(k.retiresAt) > nowMs && !isStandby(k))
    .sort((a, b) => ms(a.activatesAt) - ms(b.activatesAt) || a.seq - b.seq)
  const changes: Array<{ kid: string, retiresAt: string | null }> = []
  live.forEach((key, i) => {
    const successor = live[i + 1]
    // never earlier than stored: tokens signed under a longer ACCESS_TOKEN_TTL may still be out
    const retiresAt = successor === undefined ? null : new Date(Math.max(ms(successor.activatesAt) + lingerMs, key.retiresAt === null ? 0 : ms(key.retiresAt))).toISOString()
    if (retiresAt !== key.retiresAt) changes.push({ kid: key.kid, retiresAt })
  })
  return changes
}
