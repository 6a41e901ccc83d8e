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
 * Kysely takes no migration lock on SQLite: BEGIN IMMEDIATE is the lock, polled rather than
 * busy_timeout, which would block the event loop of an instance in the same process.
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

/** 0600 whatever the umask; SQLite gives -wal and -shm the file's own mode, so it is set first. */
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

export interface SqliteConnection {
  dialect: SqliteDialect
  usersByIds: ImmediateUserRows
}

/**
 * One statement prepared up front (ids as a JSON array, for every batch size). Inside an open
 * transaction it would see uncommitted writes, so it declines (`undefined`).
 */
export function immediateUserRows (db: BetterSqlite3.Database): ImmediateUserRows {
  // prepared on first use: the users table exists only once the migrations have run
  let statement: BetterSqlite3.Statement<[string], UserRow> | undefined
  return (ids) => {
    if (db.inTransaction) return undefined
    statement ??= db.prepare<[string], UserRow>('select * from "users" where "id" in (select "value" from json_each(?))')
    return statement.all(JSON.stringify(ids))
  }
}

/** The file (0600, in a private folder) opened with gatehouse's pragmas; bench/'s floors open theirs so too. */
export function openDatabase (path: string): BetterSqlite3.Database {
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
  return db
}

/** Kysely prepares every query anew; caching by SQL text saves the parse on every request. */
export function openSqlite (path: string): SqliteConnection {
  const db = openDatabase(path)
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
