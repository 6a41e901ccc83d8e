import type { Kysely, Selectable } from 'kysely'
import type { UserIdentitiesTable } from './feature-tables.js'
import type { Database } from './schema.js'

export interface StoredIdentity {
  id: string
  userId: string
  provider: string
  subject: string
  email: string | null
  createdAt: string
  lastLoginAt: string | null
}

function identityOf (row: Selectable<UserIdentitiesTable>): StoredIdentity {
  return {
    id: row.id,
    userId: row.user_id,
    provider: row.provider,
    subject: row.subject,
    email: row.email,
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at
  }
}

/** Upstream identities linked to users (SPEC §16's user_identities); deleted with the user. */
export class IdentityRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async findBySubject (provider: string, subject: string): Promise<StoredIdentity | undefined> {
    const row = await this.db.selectFrom('user_identities').selectAll()
      .where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst()
    return row && identityOf(row)
  }

  async find (id: string): Promise<StoredIdentity | undefined> {
    const row = await this.db.selectFrom('user_identities').selectAll().where('id', '=', id).executeTakeFirst()
    return row && identityOf(row)
  }

  /** Oldest first; ties (one millisecond) by id, so the order is stable. */
  async listOf (userId: string): Promise<StoredIdentity[]> {
    const rows = await this.db.selectFrom('user_identities').selectAll().where('user_id', '=', userId)
      .orderBy('created_at', 'asc').orderBy('id', 'asc').execute()
    return rows.map(identityOf)
  }

  async countOf (userId: string): Promise<number> {
    const row = await this.db.selectFrom('user_identities').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId).executeTakeFirst()
    return Number(row?.n ?? 0)
  }

  /** False when (provider, subject) is linked already (to this user or another: two links at once, one wins). */
  async insert (identity: StoredIdentity): Promise<boolean> {
    const result = await this.db.insertInto('user_identities').values({
      id: identity.id,
      user_id: identity.userId,
      provider: identity.provider,
      subject: identity.subject,
      email: identity.email,
      created_at: identity.createdAt,
      last_login_at: identity.lastLoginAt
    }).onConflict((oc) => oc.columns(['provider', 'subject']).doNothing()).executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  /** A sign-in through it: the upstream email as it is now, and when. */
  async recordLogin (id: string, email: string | null, now: string): Promise<void> {
    await this.db.updateTable('user_identities').set({ email, last_login_at: now }).where('id', '=', id).execute()
  }

  async remove (userId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('user_identities').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
    return result.numDeletedRows > 0n
  }
}
