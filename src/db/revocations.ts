import type { Kysely } from 'kysely'
import type { Database, RevocationRow } from './schema.js'

/** A revoked session; after `expiresAt` no access token of it can be valid, so the entry may go. */
export interface Revocation {
  /** the database's sequence: instances learn new revocations by it, never by their own clocks */
  id: number
  sessionId: string
  userId: string
  reason: string
  revokedAt: string
  expiresAt: string
}

/** PostgreSQL returns a bigserial (int8) as a string, hence Number. */
function toRevocation (row: RevocationRow): Revocation {
  return { id: Number(row.id), sessionId: row.session_id, userId: row.user_id, reason: row.reason, revokedAt: row.revoked_at, expiresAt: row.expires_at }
}

export class RevocationRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Revocations still able to matter: loaded into memory at start. */
  async listLive (now: string): Promise<Revocation[]> {
    const rows = await this.db.selectFrom('revocations').selectAll().where('expires_at', '>', now).execute()
    return rows.map(toRevocation)
  }

  /** Catch-up for another instance: every revocation with an id above `id`, in id order. */
  async listAfter (id: number): Promise<Revocation[]> {
    const rows = await this.db.selectFrom('revocations').selectAll().where('id', '>', id).orderBy('id').execute()
    return rows.map(toRevocation)
  }

  /** Records one revocation (a no-op when the id is already recorded), for the others to learn by the sequence. */
  async record (entry: { sessionId: string, userId: string, reason: string, revokedAt: string, expiresAt: string }): Promise<void> {
    await this.db.insertInto('revocations')
      .values({ session_id: entry.sessionId, user_id: entry.userId, reason: entry.reason, revoked_at: entry.revokedAt, expires_at: entry.expiresAt })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute()
  }

  async deleteExpired (now: string): Promise<void> {
    await this.db.deleteFrom('revocations').where('expires_at', '<=', now).execute()
  }
}
