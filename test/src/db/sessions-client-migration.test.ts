// Proves src/db/migrations.ts.
import { Kysely, sql, type Dialect } from 'kysely'
import t from 'tap'
import { migrateToLatest } from '../../../src/db/migrations.js'
import { prepareDatabase, STORE_KIND, testConfig } from '../../helper.js'

/*
 * 0011_sessions_client adds where and when a session was last used to a table that already
 * holds sessions: every row stays, its client unknown (null), last used at its last rotation or
 * else its sign-in.
 */

async function open (url: string): Promise<Kysely<unknown>> {
  let dialect: Dialect
  if (url.startsWith('sqlite:')) {
    const { openSqlite } = await import('../../../src/db/sqlite.js')
    dialect = openSqlite(url.slice('sqlite:'.length)).dialect
  } else {
    const { createPostgresDialect } = await import('../../../src/db/postgres.js')
    dialect = createPostgresDialect(url, { poolMax: 1 })
  }
  return new Kysely<unknown>({ dialect })
}

t.test('0011_sessions_client keeps existing sessions, with a null client and last used at the last refresh or sign-in', async (t) => {
  const config = testConfig(t)
  await prepareDatabase(t, config)
  const db = await open(config.databaseUrl)
  t.teardown(async () => { await db.destroy() })
  await migrateToLatest(db, STORE_KIND, '0007_revocation_sequence')
  await sql`insert into users (id, email, name, password_hash, roles, is_superuser, created_at, updated_at)
    values ('u1', 'old@example.com', 'Old One', 'x', '["user"]', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(db)
  await sql`insert into sessions (id, user_id, refresh_jti, refresh_claims, created_at, signed_in_at, expires_at, access_expires_at, rotated_at)
    values ('s1', 'u1', 'j1', '{}', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-09T00:00:00.000Z', '2026-01-02T00:15:00.000Z', null),
           ('s2', 'u1', 'j2', '{}', '2026-01-03T00:00:00.000Z', '2026-01-03T00:00:00.000Z', '2026-01-10T00:00:00.000Z', '2026-01-03T00:15:00.000Z', '2026-01-04T12:00:00.000Z')`.execute(db)

  const applied = await migrateToLatest(db, STORE_KIND)
  t.ok(applied.includes('0011_sessions_client'), `applied: ${applied.join(', ')}`)
  const { rows } = await sql<Record<string, unknown>>`select id, ip, user_agent, last_used_at from sessions order by id`.execute(db)
  t.strictSame(rows, [
    { id: 's1', ip: null, user_agent: null, last_used_at: '2026-01-02T00:00:00.000Z' },
    { id: 's2', ip: null, user_agent: null, last_used_at: '2026-01-04T12:00:00.000Z' }
  ])
})
