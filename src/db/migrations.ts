import { Migrator, sql, type Kysely, type Migration } from 'kysely'
import { passkeysMigration } from './passkeys-migration.js'
import { oidcClients } from './migrations-oidc.js'
import { userIdentitiesMigration } from './identities-migration.js'
import { oidcSessions } from './oidc-migration.js'

/** Versioned, append-only migrations, in the types SQLite and PostgreSQL share. */
const migrations: Record<string, Migration> = {
  '0001_users_sessions_revocations': {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('age', 'integer')
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('roles', 'text', (c) => c.notNull())
        .addColumn('is_superuser', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('users_created_at_id').on('users').columns(['created_at', 'id']).execute()

      await db.schema.createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('refresh_jti', 'text', (c) => c.notNull())
        .addColumn('refresh_claims', 'text', (c) => c.notNull())
        .addColumn('previous_jti', 'text')
        .addColumn('rotated_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute()
      await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute()
      await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute()

      // no foreign key: a deleted user's revocations must outlive the user
      await db.schema.createTable('revocations')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('revocations_revoked_at').on('revocations').column('revoked_at').execute()
      await db.schema.createIndex('revocations_expires_at').on('revocations').column('expires_at').execute()
    }
  },
  '0002_audit_events': {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('audit_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('session_id', 'text')
        .addColumn('email', 'text')
        .addColumn('address', 'text')
        .addColumn('detail', 'text')
        .execute()
      await db.schema.createIndex('audit_events_at_id').on('audit_events').columns(['at', 'id']).execute()
      await db.schema.createIndex('audit_events_user_id_at').on('audit_events').columns(['user_id', 'at']).execute()
      await db.schema.createIndex('audit_events_event_at').on('audit_events').columns(['event', 'at']).execute()
    }
  },
  '0003_users_credentials_version': {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('credentials_version', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    }
  },
  '0004_sessions_access_expires_at': {
    async up (db: Kysely<unknown>) {
      // a revocation lasts until the session's latest access token has expired; older sessions fall back to their refresh expiry
      await db.schema.alterTable('sessions').addColumn('access_expires_at', 'text', (c) => c.notNull().defaultTo('')).execute()
      await sql`update sessions set access_expires_at = expires_at`.execute(db)
    }
  },
  '0005_sessions_signed_in_at': {
    async up (db: Kysely<unknown>) {
      // SESSION_MAX_AGE counts from here; existing sessions were signed in when they were created
      await db.schema.alterTable('sessions').addColumn('signed_in_at', 'text', (c) => c.notNull().defaultTo('')).execute()
      await sql`update sessions set signed_in_at = created_at`.execute(db)
    }
  },
  '0006_audit_events_actor_outcome': {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('audit_events').addColumn('actor_id', 'text').execute()
      await db.schema.alterTable('audit_events').addColumn('outcome', 'text', (c) => c.notNull().defaultTo('success')).execute()
      await sql`update audit_events set outcome = 'failure' where event in ('login_failed', 'refresh_reuse_detected')`.execute(db)
      await sql`update audit_events set actor_id = user_id where event in ('login_succeeded', 'refreshed', 'logged_out', 'registered', 'password_changed')`.execute(db)
      await db.schema.createIndex('audit_events_actor_id_at').on('audit_events').columns(['actor_id', 'at']).execute()
    }
  },
  '0008_signing_keys': {
    async up (db: Kysely<unknown>) {
      // `seq` is unique, so two instances rotating at once create one key, not two
      await db.schema.createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'integer', (c) => c.notNull().unique())
        .addColumn('alg', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('private_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('activates_at', 'text', (c) => c.notNull())
        .addColumn('retires_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute()
    }
  },
  '0009_mail_outbox': {
    async up (db: Kysely<unknown>) {
      // subject, text and html are emptied once a row is delivered or abandoned: no link or code stays
      await db.schema.createTable('mail_outbox')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('text', 'text')
        .addColumn('html', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('due_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('claim_token', 'text')
        .addColumn('sent_at', 'text')
        .addColumn('abandoned_at', 'text')
        .addColumn('last_error', 'text')
        .execute()
      await sql`create index mail_outbox_pending on mail_outbox (due_at) where sent_at is null and abandoned_at is null`.execute(db)
      await db.schema.createIndex('mail_outbox_created_at').on('mail_outbox').column('created_at').execute()
    }
  },
  '0010_recovery': {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema.createTable('one_time_secrets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('credentials_version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('spent_at', 'text')
        .execute()
      await db.schema.createIndex('one_time_secrets_secret_hash').on('one_time_secrets').column('secret_hash').execute()
      await db.schema.createIndex('one_time_secrets_user_id_purpose').on('one_time_secrets').columns(['user_id', 'purpose']).execute()
      await db.schema.createIndex('one_time_secrets_expires_at').on('one_time_secrets').column('expires_at').execute()
    }
  },
  '0011_sessions_client': {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').addColumn('ip', 'text').execute()
      await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute()
      await db.schema.alterTable('sessions').addColumn('last_used_at', 'text', (c) => c.notNull().defaultTo('')).execute()
      await sql`update sessions set last_used_at = coalesce(rotated_at, created_at)`.execute(db)
    }
  },
  '0012_totp': {
    async up (db: Kysely<unknown>) {
      // last_step is the newest time step accepted: a code is taken only by raising it (no replay)
      await db.schema.createTable('totp_factors')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('last_step', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('activated_at', 'text')
        .execute()
      await db.schema.createTable('recovery_codes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .execute()
      await db.schema.createIndex('recovery_codes_user_id').on('recovery_codes').column('user_id').execute()
      await db.schema.createTable('mfa_challenges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('remember', 'integer', (c) => c.notNull())
        .addColumn('amr', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('spent_at', 'text')
        .execute()
      await db.schema.createIndex('mfa_challenges_expires_at').on('mfa_challenges').column('expires_at').execute()
    }
  },
  '0013_passkeys': passkeysMigration,
  '0014_api_keys': {
    async up (db: Kysely<unknown>) {
      // a service account is a user of kind `service` (docs/api-keys.md#service-accounts)
      await db.schema.alterTable('users').addColumn('kind', 'text', (c) => c.notNull().defaultTo('user')).execute()
      await db.schema.createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('roles', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('hash_key_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute()
      await db.schema.createIndex('api_keys_user_id').on('api_keys').column('user_id').execute()
    }
  },
  '0016_oidc_clients': oidcClients,
  '0017_oidc_sessions': oidcSessions,
  '0018_user_identities': userIdentitiesMigration
}

/**
 * Instances read new revocations by the database's sequence, not by their own clocks. SQLite adds
 * an AUTOINCREMENT key only by rebuilding the table (it never reuses an id after pruning).
 */
function revocationSequence (kind: 'sqlite' | 'postgres'): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (kind === 'postgres') {
        await sql`alter table revocations add column id bigserial not null unique`.execute(db)
        await db.schema.dropIndex('revocations_revoked_at').execute()
        return
      }
      await sql`create table revocations_next (
        id integer primary key autoincrement, session_id text not null unique, user_id text not null,
        reason text not null, revoked_at text not null, expires_at text not null)`.execute(db)
      await sql`insert into revocations_next (session_id, user_id, reason, revoked_at, expires_at)
        select session_id, user_id, reason, revoked_at, expires_at from revocations order by revoked_at`.execute(db)
      await db.schema.dropTable('revocations').execute()
      await db.schema.alterTable('revocations_next').renameTo('revocations').execute()
      await db.schema.createIndex('revocations_expires_at').on('revocations').column('expires_at').execute()
    }
  }
}

export async function migrateToLatest (db: Kysely<unknown>, kind: 'sqlite' | 'postgres' = 'sqlite', target?: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations, '0007_revocation_sequence': revocationSequence(kind) }) },
    ...(kind === 'postgres' && { migrationTableSchema: await currentSchema(db) })
  })
  const { error, results = [] } = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target)
  if (error) throw error
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Kysely looks for its migration tables in every schema unless told one, so another app's would make it skip ours. */
async function currentSchema (db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
  const schema = rows[0]?.schema
  if (!schema) throw new Error('PostgreSQL: no schema of the search_path exists; create it or fix DATABASE_URL')
  return schema
}
