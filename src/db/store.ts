import { tracingChannel } from 'node:diagnostics_channel'
import { Kysely, sql } from 'kysely'
import { AuditEventRepository } from './audit-events.js'
import { MailOutboxRepository } from './mail-outbox.js'
import { migrateToLatest } from './migrations.js'
import { OneTimeSecretRepository } from './one-time-secrets.js'
import { RevocationRepository } from './revocations.js'
import type { Database } from './schema.js'
import { SigningKeyRepository } from './signing-keys.js'
import { SessionRepository } from './sessions.js'
import { TotpRepository } from './totp.js'
import { UserRepository, type ImmediateUserRows } from './users.js'

/**
 * The one storage seam. Services see repositories and never which database is behind them;
 * `connect` picks the driver from the DATABASE_URL scheme and imports only that one.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  readonly users: UserRepository
  readonly sessions: SessionRepository
  readonly revocations: RevocationRepository
  readonly auditEvents: AuditEventRepository
  readonly signingKeys: SigningKeyRepository
  /** mail to deliver: enqueue on the transaction that writes what the mail is about */
  readonly mailOutbox: MailOutboxRepository
  readonly oneTimeSecrets: OneTimeSecretRepository
  /** TOTP factors, recovery codes and sign-in challenges */
  readonly totp: TotpRepository
  /** Runs `fn` on a store bound to one transaction: all its writes land, or none. */
  transaction<T> (fn: (tx: Store) => Promise<T>): Promise<T>
  migrate (): Promise<string[]>
  ping (): Promise<void>
  close (): Promise<void>
}

/**
 * Each transaction is traced here (start, then asyncEnd or error), its context naming the store,
 * as Fastify and undici trace their work: an observer can tell what runs while a transaction
 * holds a connection (SQLite has only one). With no subscriber it costs a check.
 */
export const transactionChannel = tracingChannel<unknown, { store: Store }>('gatehouse:db.transaction')

class KyselyStore implements Store {
  readonly users: UserRepository
  readonly sessions: SessionRepository
  readonly revocations: RevocationRepository
  readonly auditEvents: AuditEventRepository
  readonly signingKeys: SigningKeyRepository
  readonly mailOutbox: MailOutboxRepository
  readonly oneTimeSecrets: OneTimeSecretRepository
  readonly totp: TotpRepository

  /** `usersByIds`: SQLite's read of user rows without Kysely (src/db/sqlite.ts), for the store outside transactions */
  constructor (readonly kind: Store['kind'], private readonly db: Kysely<Database>, usersByIds?: ImmediateUserRows) {
    this.users = new UserRepository(db, kind === 'postgres', usersByIds)
    this.sessions = new SessionRepository(db, kind === 'postgres')
    this.revocations = new RevocationRepository(db)
    this.auditEvents = new AuditEventRepository(db)
    this.signingKeys = new SigningKeyRepository(db)
    this.mailOutbox = new MailOutboxRepository(db, kind === 'postgres')
    this.oneTimeSecrets = new OneTimeSecretRepository(db, kind === 'postgres')
    this.totp = new TotpRepository(db)
  }

  async transaction<T> (fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return await fn(this)
    const run = async () => await this.db.transaction().execute(async (trx) => await fn(new KyselyStore(this.kind, trx)))
    return transactionChannel.hasSubscribers ? await transactionChannel.tracePromise(run, { store: this }) : await run()
  }

  async migrate () {
    return await migrateToLatest(this.db as Kysely<unknown>, this.kind)
  }

  async ping () {
    await sql`select 1`.execute(this.db)
  }

  async close () {
    await this.db.destroy()
  }
}

export interface ConnectOptions {
  /** PostgreSQL: the pool's upper bound (DATABASE_POOL_MAX); SQLite has one connection. */
  poolMax?: number
  /** PostgreSQL: errors of pooled connections, which are logged, never thrown. */
  onError?: (err: Error) => void
}

export async function connect (url: string, options: ConnectOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const { openSqlite } = await import('./sqlite.js')
    const { dialect, usersByIds } = openSqlite(url.slice('sqlite:'.length))
    return new KyselyStore('sqlite', new Kysely<Database>({ dialect }), usersByIds)
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { createPostgresDialect } = await import('./postgres.js')
    return new KyselyStore('postgres', new Kysely<Database>({ dialect: createPostgresDialect(url, options) }))
  }
  throw new Error(`Unsupported DATABASE_URL scheme: ${url.split(':')[0]}`)
}
