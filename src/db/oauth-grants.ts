import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export interface StoredGrant { clientId: string, scopes: string[], grantedAt: string }

/** The consents users gave OpenID Connect clients: one row per user and client, its scopes together. */
export class OauthGrantRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async find (userId: string, clientId: string): Promise<StoredGrant | undefined> {
    const row = await this.db.selectFrom('oauth_grants').select(['client_id', 'scopes', 'granted_at'])
      .where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst()
    return row && { clientId: row.client_id, scopes: JSON.parse(row.scopes) as string[], grantedAt: row.granted_at }
  }

  async listFor (userId: string): Promise<StoredGrant[]> {
    const rows = await this.db.selectFrom('oauth_grants').select(['client_id', 'scopes', 'granted_at'])
      .where('user_id', '=', userId).orderBy('granted_at').orderBy('client_id').execute()
    return rows.map((row) => ({ clientId: row.client_id, scopes: JSON.parse(row.scopes) as string[], grantedAt: row.granted_at }))
  }

  /** Replaces the user's grant to the client (the caller passes the union of old and new scopes). */
  async put (userId: string, grant: StoredGrant): Promise<void> {
    const scopes = JSON.stringify(grant.scopes)
    await this.db.insertInto('oauth_grants').values({ user_id: userId, client_id: grant.clientId, scopes, granted_at: grant.grantedAt })
      .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ scopes, granted_at: grant.grantedAt }))
      .execute()
  }

  async remove (userId: string, clientId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('oauth_grants').where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  /** every user's grant to a client that is deleted or disabled */
  async removeForClient (clientId: string): Promise<number> {
    const result = await this.db.deleteFrom('oauth_grants').where('client_id', '=', clientId).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
