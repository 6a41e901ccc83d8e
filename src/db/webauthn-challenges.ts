import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export type CeremonyPurpose = 'registration' | 'login' | 'second_factor'

export interface NewCeremony { challengeHash: string, purpose: CeremonyPurpose, userId: string | null, createdAt: string, expiresAt: string }

export interface SpentCeremony { challengeHash: string, userId: string | null }

/** WebAuthn challenges (keyed hashes only), each spent by one conditional update. */
export class WebauthnChallengeRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** The expired rows go as a new one comes: the table holds about five minutes of ceremonies. */
  async create (ceremony: NewCeremony): Promise<string> {
    const id = randomUUID()
    await this.db.deleteFrom('webauthn_challenges').where('expires_at', '<', ceremony.createdAt).execute()
    await this.db.insertInto('webauthn_challenges').values({
      id,
      challenge_hash: ceremony.challengeHash,
      purpose: ceremony.purpose,
      user_id: ceremony.userId,
      created_at: ceremony.createdAt,
      expires_at: ceremony.expiresAt,
      spent_at: null
    }).execute()
    return id
  }

  /**
   * One statement: of concurrent uses of one challenge exactly one gets the row back; a spent,
   * expired or other-purpose challenge gives nothing.
   */
  async spend (id: string, purpose: CeremonyPurpose, now: string): Promise<SpentCeremony | undefined> {
    const row = await this.db.updateTable('webauthn_challenges').set({ spent_at: now })
      .where('id', '=', id).where('purpose', '=', purpose).where('spent_at', 'is', null).where('expires_at', '>', now)
      .returning(['challenge_hash', 'user_id'])
      .executeTakeFirst()
    return row && { challengeHash: row.challenge_hash, userId: row.user_id }
  }
}
