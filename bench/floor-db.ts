import { randomBytes, randomUUID } from 'node:crypto'
import type BetterSqlite3 from 'better-sqlite3'
import { Kysely } from 'kysely'
import { migrateToLatest } from '../src/db/migrations.js'
import { openDatabase, openSqlite } from '../src/db/sqlite.js'

/**
 * A floor server's database (bench/passkey-ceiling.ts with CEILING_DB, bench/userinfo-floor.ts):
 * gatehouse's own schema (its migrations) at `file`, opened again as gatehouse opens it (openDatabase)
 * for statements prepared once, and one user in it, with a hash of the default argon2id's length.
 */
export async function openFloorDb (file: string): Promise<{ db: BetterSqlite3.Database, userId: string }> {
  const { dialect } = openSqlite(file)
  const kysely = new Kysely<unknown>({ dialect })
  await migrateToLatest(kysely)
  await kysely.destroy()
  const db = openDatabase(file)
  const userId = randomUUID()
  const now = new Date().toISOString()
  const hash = `$argon2id$v=19$m=19456,t=2,p=1$${randomBytes(16).toString('base64')}$${randomBytes(32).toString('base64')}`
  db.prepare('insert into users (id, email, name, password_hash, roles, created_at, updated_at, email_verified) values (?, ?, ?, ?, ?, ?, ?, 1)')
    .run(userId, 'floor@example.com', 'Floor User', hash, '["user"]', now, now)
  return { db, userId }
}
