import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export type FactorState = 'pending' | 'active'

export interface TotpFactor { userId: string, sealedSecret: string, state: FactorState, lastStep: number | null }

export interface NewChallenge { tokenHash: string, userId: string, remember: boolean, amr: string[], createdAt: string, expiresAt: string }

export interface AcceptedStep { userId: string, state: FactorState, step: number, now: string, activate?: boolean }

export interface ReservedChallenge { id: string, userId: string, remember: boolean, amr: string[], attempts: number }

/** Everything that must happen once is one conditional UPDATE: of concurrent requests exactly one changes the row. */
export class TotpRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async find (userId: string): Promise<TotpFactor | undefined> {
    const row = await this.db.selectFrom('totp_factors').selectAll().where('user_id', '=', userId).executeTakeFirst()
    if (row === undefined) return undefined
    return { userId: row.user_id, sealedSecret: row.secret, state: row.state as FactorState, lastStep: row.last_step === null ? null : Number(row.last_step) }
  }

  async putPending (userId: string, sealedSecret: string, now: string): Promise<boolean> {
    const result = await this.db.insertInto('totp_factors')
      .values({ user_id: userId, secret: sealedSecret, state: 'pending', last_step: null, created_at: now, activated_at: null })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret: sealedSecret, last_step: null, created_at: now })
        .where('totp_factors.state', '=', 'pending'))
      .executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  /** Only a step newer than every step accepted before (no replay). */
  async acceptStep ({ userId, state, step, now, activate = false }: AcceptedStep): Promise<boolean> {
    const result = await this.db.updateTable('totp_factors')
      .set(activate ? { last_step: step, state: 'active', activated_at: now } : { last_step: step })
      .where('user_id', '=', userId).where('state', '=', state)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async remove (userId: string): Promise<boolean> {
    await this.db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute()
    await this.db.deleteFrom('mfa_challenges').where('user_id', '=', userId).execute()
    const result = await this.db.deleteFrom('totp_factors').where('user_id', '=', userId).executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  async replaceRecoveryCodes (userId: string, hashes: string[], now: string): Promise<void> {
    await this.db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute()
    await this.db.insertInto('recovery_codes')
      .values(hashes.map((hash) => ({ id: randomUUID(), user_id: userId, code_hash: hash, created_at: now, used_at: null })))
      .execute()
  }

  async useRecoveryCode (userId: string, hashes: string[], now: string): Promise<boolean> {
    const result = await this.db.updateTable('recovery_codes').set({ used_at: now })
      .where('user_id', '=', userId).where('code_hash', 'in', hashes).where('used_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async hasRecoveryCode (userId: string, hashes: string[]): Promise<boolean> {
    const row = await this.db.selectFrom('recovery_codes').select('id')
      .where('user_id', '=', userId).where('code_hash', 'in', hashes).where('used_at', 'is', null)
      .executeTakeFirst()
    return row !== undefined
  }

  async createChallenge (challenge: NewChallenge): Promise<void> {
    await this.db.insertInto('mfa_challenges').values({
      id: randomUUID(),
      token_hash: challenge.tokenHash,
      user_id: challenge.userId,
      remember: challenge.remember ? 1 : 0,
      amr: JSON.stringify(challenge.amr),
      created_at: challenge.createdAt,
      expires_at: challenge.expiresAt,
      attempts: 0
    }).execute()
  }

  async reserveChallenge (tokenHash: string, maxAttempts: number, now: string): Promise<ReservedChallenge | undefined> {
    const row = await this.db.updateTable('mfa_challenges')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('token_hash', '=', tokenHash).where('spent_at', 'is', null)
      .where('expires_at', '>', now).where('attempts', '<', maxAttempts)
      .returning(['id', 'user_id', 'remember', 'amr', 'attempts'])
      .executeTakeFirst()
    return row && { id: row.id, userId: row.user_id, remember: row.remember === 1, amr: JSON.parse(row.amr) as string[], attempts: row.attempts }
  }

  async liveChallengeUser (tokenHash: string, maxAttempts: number, now: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('mfa_challenges').select('user_id')
      .where('token_hash', '=', tokenHash).where('spent_at', 'is', null)
      .where('expires_at', '>', now).where('attempts', '<', maxAttempts)
      .executeTakeFirst()
    return row?.user_id
  }

  async spendChallenge (id: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('mfa_challenges').set({ spent_at: now })
      .where('id', '=', id).where('spent_at', 'is', null).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}
