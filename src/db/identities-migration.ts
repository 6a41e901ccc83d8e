import type { Kysely, Migration } from 'kysely'

/**
 * '0018_user_identities' (src/db/migrations.ts): the upstream identities linked to users (SPEC §16).
 * One (provider, subject) links to one user; each row goes with its user.
 */
export const userIdentitiesMigration: Migration = {
  async up (db: Kysely<unknown>) {
    await db.schema.createTable('user_identities')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_login_at', 'text')
      .addUniqueConstraint('user_identities_provider_subject', ['provider', 'subject'])
      .execute()
    await db.schema.createIndex('user_identities_user_id').on('user_identities').column('user_id').execute()
  }
}
