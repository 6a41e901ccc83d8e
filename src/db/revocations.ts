import type { Kysely } from 'kysely'
import type { Database, RevocationRow } from './schema.js'

export class RevocationRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Revocations still able to matter: loaded into memory at start. */
  async listLive (now: string): Promise<RevocationRow[]> {
    return await this.db.selectFrom('revocations').selectAll().where('expires_at', '>', now).execute()
  }

  /** Catch-up for another instance: everything revoked at or after a time. */
  async listSince (revokedAt: string): Promise<RevocationRow[]> {
    return await this.db.selectFrom('revocations').selectAll().where('revoked_at', '>=', revokedAt).execute()
  }

  async deleteExpired (now: string): Promise<void> {
    await this.db.deleteFrom('revocations').where('expires_at', '<=', now).execute()
  }
}
