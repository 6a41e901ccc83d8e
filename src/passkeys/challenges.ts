import { randomBytes, timingSafeEqual } from 'node:crypto'
import { KeyedHash } from '../crypto/keyed-hash.js'
import type { DataKey } from '../crypto/envelope.js'
import type { Store } from '../db/store.js'
import type { CeremonyPurpose } from '../db/webauthn-challenges.js'

export const CHALLENGE_TTL_SECONDS = 300

export interface IssuedChallenge { challengeId: string, challenge: Uint8Array<ArrayBuffer> }

export interface SpentChallenge {
  userId: string | null
  /** whether `challenge` (base64url, from clientDataJSON) is the one issued: a constant-time compare of keyed hashes */
  matches (challenge: string): boolean
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * WebAuthn challenges: 32 random bytes for one ceremony, kept only as an HMAC under a key derived
 * from DATA_ENCRYPTION_KEYS (its key id beside it, so a JWT_SECRET rotation voids none), spent by
 * one conditional update before the response is looked at.
 */
export class Challenges {
  private readonly keys: Array<{ id: string, hash: KeyedHash }>

  constructor (private readonly store: Store, dataKeys: DataKey[], private readonly clock: () => number) {
    this.keys = dataKeys.map(({ id, key }) => ({ id, hash: new KeyedHash(key, 'gatehouse webauthn challenges') }))
    if (this.keys.length === 0) throw new Error('passkeys need DATA_ENCRYPTION_KEYS')
  }

  async issue (purpose: CeremonyPurpose, userId: string | null): Promise<IssuedChallenge> {
    const challenge = new Uint8Array(randomBytes(32))
    const now = this.clock()
    const [current] = this.keys
    if (current === undefined) throw new Error('passkeys need DATA_ENCRYPTION_KEYS')
    const challengeId = await this.store.webauthnChallenges.create({
      challengeHash: `k:${current.id}:${current.hash.of(Buffer.from(challenge).toString('base64url'))}`,
      purpose,
      userId,
      createdAt: iso(now),
      expiresAt: iso(now + CHALLENGE_TTL_SECONDS * 1000)
    })
    return { challengeId, challenge }
  }

  /** Undefined for an unknown, spent, expired or other-purpose challenge; of concurrent spends, one wins. */
  async spend (challengeId: string, purpose: CeremonyPurpose): Promise<SpentChallenge | undefined> {
    const spent = await this.store.webauthnChallenges.spend(challengeId, purpose, iso(this.clock()))
    if (spent === undefined) return undefined
    const [, keyId, stored] = /^k:([^:]+):(.+)$/.exec(spent.challengeHash) ?? []
    const key = this.keys.find((k) => k.id === keyId)
    return {
      userId: spent.userId,
      matches: (challenge) => {
        if (key === undefined || stored === undefined) return false
        const given = Buffer.from(key.hash.of(challenge))
        const expected = Buffer.from(stored)
        return given.length === expected.length && timingSafeEqual(given, expected)
      }
    }
  }
}
