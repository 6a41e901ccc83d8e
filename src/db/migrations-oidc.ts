import type { Kysely, Migration } from 'kysely'

/**
 * The OpenID Connect provider's tables (src/db/oauth-clients.ts, src/db/oauth-grants.ts), in a file
 * of their own beside src/db/migrations.ts, which lists it as '0016_oidc_clients'.
 */
export const oidcClients: Migration = {
  async up (db: Kysely<unknown>) {
    // lists are JSON text; the secret is a keyed hash beside the id of the data key it was made under
    await db.schema.createTable('oauth_clients')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull())
      .addColumn('web_origins', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('allowed_roles', 'text', (c) => c.notNull())
      .addColumn('require_aal2', 'integer', (c) => c.notNull())
      .addColumn('skip_consent', 'integer', (c) => c.notNull())
      .addColumn('grant_types', 'text', (c) => c.notNull())
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('access_token_ttl', 'integer')
      .addColumn('disabled', 'integer', (c) => c.notNull())
      .addColumn('secret_hash', 'text')
      .addColumn('secret_key_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // no foreign key to oauth_clients: a client of OIDC_CLIENTS_FILE has no row
    await db.schema.createTable('oauth_grants')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_grants_pkey', ['user_id', 'client_id'])
      .execute()
    await db.schema.createIndex('oauth_grants_client_id').on('oauth_grants').column('client_id').execute()
  }
}
