import { chmodSync, closeSync, fchmodSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import { SqliteAdapter, SqliteDialect } from 'kysely'
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { makePrivateDir } from '../config/data-dir.js'
import type { UserRow } from './schema.js'
import type { ImmediateUserRows } from './users.js'

const STATEMENT_CACHE_LIMIT = 256
const BUSY_TIMEOUT_MS = 5000

/**
 * Kysely takes no migration lock on SQLite, so two processes starting on a fresh file both ran
 * the migrations and one failed ("table users already exists"). BEGIN IMMEDIATE is SQLite's
 * write lock: the second waits for it, then finds the migrations applied. It is polled, not
 * waited for with busy_timeout, which would block the event loop of an instance in the same
 * process that holds the lock.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  constructor (private readonly db: BetterSqlite3.Database) { super() }

  override async acquireMigrationLock (): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS
    for (;;) {
      this.db.pragma('busy_timeout = 0')
      try {
        this.db.exec('BEGIN IMMEDIATE')
        return
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err
      } finally {
        this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
      }
      await sleep(20)
    }
  }

  override async releaseMigrationLock (): Promise<void> {
    if (this.db.inTransaction) this.db.exec('COMMIT')
  }
}

class LockingSqliteDialect extends SqliteDialect {
  constructor (config: { database: SqliteDatabase }, private readonly db: BetterSqlite3.Database) { super(config) }
  override createAdapter (): SqliteAdapter { return new LockingSqliteAdapter(this.db) }
}

/**
 * The database holds password hashes and the audit trail: 0600 whatever the umask. SQLite
 * creates -wal and -shm with the database file's own mode, so the file is made (or, left by an
 * older version, tightened) before SQLite opens it; leftovers of a crash are tightened too.
 */
function makePrivateFiles (path: string): void {
  const fd = openSync(path, 'a', 0o600)
  try {
    fchmodSync(fd, 0o600)
  } finally {
    closeSync(fd)
  }
  for (const suffix of ['-wal', '-shm']) {
    try {
      chmodSync(path + suffix, 0o600)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
}

/** The SQLite file opened: the dialect Kysely runs on, and the read made without it. */
export interface SqliteConnection {
  dialect: SqliteDialect
  usersByIds: ImmediateUserRows
}

/**
 * User rows read by ids at once, with one statement prepared up front (the ids as a JSON array,
 * so one statement serves every batch size): the read every signed-in request of /auth/me and
 * /api/users/:id makes, in batches (src/db/users.ts). Through Kysely each batch was a query built
 * and compiled, a wait for the connection's mutex and a promise chain. While a transaction is
 * open on the one connection the read would see its uncommitted writes, so it declines
 * (`undefined`) and the caller queues behind Kysely like any query.
 */
function immediateUserRows (db: BetterSqlite3.Database): ImmediateUserRows {
  // prepared on first use: the users table exists only once the migrations have run
  let statement: BetterSqlite3.Statement<[string], UserRow> | undefined
  return (ids) => {
    if (db.inTransaction) return undefined
    statement ??= db.prepare<[string], UserRow>('select * from "users" where "id" in (select "value" from json_each(?))')
    return statement.all(JSON.stringify(ids))
  }
}

/**
 * better-sqlite3 behind Kysely. Kysely prepares every query anew; the queries come from code,
 * so caching the prepared statements by SQL text saves the parse on every request.
 */
export function openSqlite (path: string): SqliteConnection {
  if (path !== ':memory:' && path !== '') {
    makePrivateDir(dirname(path))
    makePrivateFiles(path)
  }
  const db = new BetterSqlite3(path)
  db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  // wait for another process's write lock (a second worker, the CLI) instead of failing with SQLITE_BUSY
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  db.pragma('synchronous = NORMAL')
  const statements = new Map<string, SqliteStatement>()
  const database: SqliteDatabase = {
    close: () => db.close(),
    prepare (sql) {
      let statement = statements.get(sql)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_LIMIT) statements.clear()
        statement = db.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    }
  }
  return { dialect: new LockingSqliteDialect({ database }, db), usersByIds: immediateUserRows(db) }
}
