import { randomUUID } from 'node:crypto'
import type { ExpressionBuilder, Kysely } from 'kysely'
import type { SecretPurpose } from '../crypto/one-time-secrets.js'
import type { Database } from './schema.js'

export interface NewSecret {
  userId: string
  purpose: SecretPurpose
  secretHash: string
  /** the user's credentials_version now: a password changed later voids the secret */
  credentialsVersion: number
  createdAt: string
  expiresAt: string
}

export interface ReservedCode { id: string, secretHash: string, attempts: number }

function liveReset (secretHash: string, now: string) {
  return (eb: ExpressionBuilder<Database, 'one_time_secrets'>) => eb.and([
    eb('secret_hash', '=', secretHash),
    eb('purpose', '=', 'reset'),
    eb('spent_at', 'is', null),
    eb('expires_at', '>', now),
    eb('credentials_version', '=', eb.selectFrom('users').select('users.credentials_version').whereRef('users.id', '=', 'one_time_secrets.user_id'))
  ])
}

/** Reset tokens and email codes (hashes only), spent by single atomic statements. */
export class OneTimeSecretRepository {
  constructor (private readonly db: Kysely<Database>, private readonly lockUsers = false) {}

  /**
   * On PostgreSQL the user row is locked first: under READ COMMITTED two issues at once would
   * each spend what was live before either inserted, and leave two live codes.
   */
  async issue (secret: NewSecret, replace: boolean): Promise<void> {
    if (replace && this.lockUsers) await this.db.selectFrom('users').select('id').where('id', '=', secret.userId).forUpdate().execute()
    if (replace) {
      await this.db.updateTable('one_time_secrets').set({ spent_at: secret.createdAt })
        .where('user_id', '=', secret.userId).where('purpose', '=', secret.purpose).where('spent_at', 'is', null)
        .execute()
    }
    await this.db.insertInto('one_time_secrets').values({
      id: randomUUID(),
      user_id: secret.userId,
      purpose: secret.purpose,
      secret_hash: secret.secretHash,
      credentials_version: secret.credentialsVersion,
      created_at: secret.createdAt,
      expires_at: secret.expiresAt,
      attempts: 0
    }).execute()
  }

  /** A cheap look before any hashing. */
  async findLiveReset (secretHash: string, now: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('one_time_secrets').select('user_id').where(liveReset(secretHash, now)).executeTakeFirst()
    return row?.user_id
  }

  /** One statement: of two requests with one token exactly one gets its user back. */
  async consumeReset (secretHash: string, now: string): Promise<string | undefined> {
    const row = await this.db.updateTable('one_time_secrets').set({ spent_at: now })
      .where(liveReset(secretHash, now)).returning('user_id').executeTakeFirst()
    return row?.user_id
  }

  /** Reserved before the check, so concurrent guesses cannot outrun the limit. */
  async reserveAttempt (userId: string, purpose: SecretPurpose, maxAttempts: number, now: string): Promise<ReservedCode | undefined> {
    const row = await this.db.updateTable('one_time_secrets')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('user_id', '=', userId).where('purpose', '=', purpose)
      .where('spent_at', 'is', null).where('expires_at', '>', now).where('attempts', '<', maxAttempts)
      .returning(['id', 'secret_hash', 'attempts'])
      .executeTakeFirst()
    return row && { id: row.id, secretHash: row.secret_hash, attempts: row.attempts }
  }

  /** Reserved before the second factor is checked, so concurrent codes cannot outrun the limit. */
  async reserveResetAttempt (secretHash: string, maxAttempts: number, now: string): Promise<{ id: string, attempts: number } | undefined> {
    const row = await this.db.updateTable('one_time_secrets')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where(liveReset(secretHash, now)).where('attempts', '<', maxAttempts)
      .returning(['id', 'attempts'])
      .executeTakeFirst()
    return row && { id: row.id, attempts: row.attempts }
  }

  async spend (id: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('one_time_secrets').set({ spent_at: now })
      .where('id', '=', id).where('spent_at', 'is', null).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async spendAllOf (userId: string, now: string): Promise<number> {
    const result = await this.db.updateTable('one_time_secrets').set({ spent_at: now })
      .where('user_id', '=', userId).where('spent_at', 'is', null).executeTakeFirst()
    return Number(result.numUpdatedRows)
  }
}
