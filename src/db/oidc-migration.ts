import type { Kysely, Migration } from 'kysely'

/**
 * '0017_oidc_sessions' (src/db/migrations.ts): child sessions of OpenID Connect clients, the
 * pending steps of /oauth2/authorize and the authorization codes, their ids and codes only as
 * keyed hashes (src/oidc/flow-secrets.ts).
 */
export const oidcSessions: Migration = {
  async up (db: Kysely<unknown>) {
    // a child session: an OpenID Connect client's authorization, born of a portal session
    await db.schema.alterTable('sessions').addColumn('client_id', 'text').execute()
    await db.schema.alterTable('sessions').addColumn('parent_session_id', 'text').execute()
    await db.schema.createIndex('sessions_client_id').on('sessions').column('client_id').execute()
    // the pending step of /oauth2/authorize (sign-in, consent): only a keyed hash of its id
    await db.schema.createTable('oauth_interactions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('spent_at', 'text')
      .execute()
    await db.schema.createIndex('oauth_interactions_expires_at').on('oauth_interactions').column('expires_at').execute()
    // authorization codes: only a keyed hash; child_session_id is the session its first use created
    await db.schema.createTable('oauth_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text')
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('spent_at', 'text')
      .addColumn('child_session_id', 'text')
      .addColumn('replayed_at', 'text')
      .execute()
    await db.schema.createIndex('oauth_codes_expires_at').on('oauth_codes').column('expires_at').execute()
  }
}
