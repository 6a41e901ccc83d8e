import type { StoredSigningKey } from '../db/signing-keys.js'

export type KeyState = 'next' | 'current' | 'previous' | 'revoked' | 'gone'

const ms = (time: string | null): number => time === null ? Infinity : Date.parse(time)

/** The column is required, so the standby's "never on its own" is the last representable instant. */
export const STANDBY = '9999-12-31T23:59:59.999Z'

export const isStandby = (key: Pick<StoredSigningKey, 'activatesAt' | 'revokedAt'>): boolean => key.revokedAt === null && key.activatesAt === STANDBY

/** The `next` key published longest: every verifier has had the most time to fetch it. */
export function promotable<K extends Pick<StoredSigningKey, 'seq' | 'activatesAt' | 'revokedAt'>> (keys: readonly K[], nowMs: number): K | undefined {
  return keys.filter((k) => k.revokedAt === null && ms(k.activatesAt) > nowMs).sort((a, b) => a.seq - b.seq)[0]
}

/** Every instance reads the same rows, so every instance picks the same key. */
export function currentKey<K extends Pick<StoredSigningKey, 'seq' | 'activatesAt' | 'revokedAt'>> (keys: readonly K[], nowMs: number): K | undefined {
  let current: K | undefined
  for (const key of keys) {
    if (key.revokedAt !== null || ms(key.activatesAt) > nowMs) continue
    if (current === undefined || ms(key.activatesAt) > ms(current.activatesAt) ||
      (ms(key.activatesAt) === ms(current.activatesAt) && key.seq > current.seq)) current = key
  }
  return current
}

export function keyState (key: StoredSigningKey, current: StoredSigningKey | undefined, nowMs: number): KeyState {
  const retired = ms(key.retiresAt) <= nowMs
  if (key.revokedAt !== null) return retired ? 'gone' : 'revoked'
  if (key === current) return 'current'
  if (ms(key.activatesAt) > nowMs) return 'next'
  return retired || key.retiresAt === null ? 'gone' : 'previous'
}

/** Keys already gone keep their time, and none is brought forward. */
export function relink (keys: readonly StoredSigningKey[], lingerMs: number, nowMs: number): Array<{ kid: string, retiresAt: string | null }> {
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
