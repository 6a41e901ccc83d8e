import type { Kysely } from 'kysely'
import type { Database, RevocationRow } from './schema.js'

export class RevocationRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Revocations still able to matter: loaded into memory at start. */
  async listLive (now: string): Promise<RevocationRow[]> {
    return (await this.db.selectFrom('revocations').selectAll().where('expires_at', '>', now).execute()).map(toRow)
  }

  /** Catch-up for another instance: every revocation with an id above `id`, in id order. */
  async listAfter (id: number): Promise<RevocationRow[]> {
    return (await this.db.selectFrom('revocations').selectAll().where('id', '>', id).orderBy('id').execute()).map(toRow)
  }

  async deleteExpired (now: string): Promise<void> {
    await this.db.deleteFrom('revocations').where('expires_at', '<=', now).execute()
  }
}

/** PostgreSQL returns a bigserial (int8) as a string. */
function toRow (row: RevocationRow): RevocationRow {
  return { ...row, id: Number(row.id) }
}
