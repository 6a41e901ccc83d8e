import type { Kysely } from 'kysely'
import type { Database, RevocationRow } from './schema.js'

/** A revoked session; after `expiresAt` no access token of it can be valid, so the entry may go. */
export interface Revocation {
  sessionId: string
  userId: string
  reason: string
  revokedAt: string
  expiresAt: string
}

function toRevocation (row: RevocationRow): Revocation {
  return { sessionId: row.session_id, userId: row.user_id, reason: row.reason, revokedAt: row.revoked_at, expiresAt: row.expires_at }
}

export class RevocationRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Revocations still able to matter: loaded into memory at start. */
  async listLive (now: string): Promise<Revocation[]> {
    const rows = await this.db.selectFrom('revocations').selectAll().where('expires_at', '>', now).execute()
    return rows.map(toRevocation)
  }

  /** Catch-up for another instance: everything revoked at or after a time. */
  async listSince (revokedAt: string): Promise<Revocation[]> {
    const rows = await this.db.selectFrom('revocations').selectAll().where('revoked_at', '>=', revokedAt).execute()
    return rows.map(toRevocation)
  }

  async deleteExpired (now: string): Promise<void> {
    await this.db.deleteFrom('revocations').where('expires_at', '<=', now).execute()
  }
}
