import type { Kysely, Migration } from 'kysely'

/** '0013_passkeys' (src/db/migrations.ts): passkeys, their users' WebAuthn handles, the ceremonies' challenges; each row goes with its user. */
export const passkeysMigration: Migration = {
  async up (db: Kysely<unknown>) {
    await db.schema.createTable('webauthn_user_handles')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('handle', 'text', (c) => c.notNull().unique())
      .execute()
    await db.schema.createTable('passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('sign_count', 'bigint', (c) => c.notNull())
      .addColumn('backup_eligible', 'integer', (c) => c.notNull())
      .addColumn('backed_up', 'integer', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('aaguid', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .execute()
    await db.schema.createIndex('passkeys_user_id').on('passkeys').column('user_id').execute()
    // a challenge is spent by one conditional update of its row (spent_at), before the response is checked
    await db.schema.createTable('webauthn_challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('challenge_hash', 'text', (c) => c.notNull())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('spent_at', 'text')
      .execute()
    await db.schema.createIndex('webauthn_challenges_expires_at').on('webauthn_challenges').column('expires_at').execute()
  }
}
