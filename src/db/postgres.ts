import { PostgresDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely'
import pg from 'pg'
import { ServiceUnavailable } from '../errors.js'

export interface PostgresOptions {
  /** Upper bound of open connections per process (DATABASE_POOL_MAX). */
  poolMax?: number
  /** Where errors of pooled connections go (the server restarted, the network dropped). */
  onError?: (err: Error) => void
}

/** An unreachable server fails a checkout after this long, so /ready answers 503 instead of hanging. */
const CONNECT_TIMEOUT_MS = 2000
/** No query of this service takes long: a stuck one is ended by the server, freeing its connection. */
const STATEMENT_TIMEOUT_MS = 30_000
/** A transaction left open (a crashed request) would hold its row locks until this ends it. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000

/**
 * node-postgres behind Kysely, on a bounded pool that `store.close()` ends (Kysely's `destroy`).
 * The connection string may carry its own settings, e.g. `?options=-c search_path=auth` to keep
 * the tables in a schema of their own. Types: only int8 (`count(*)`) comes back as a string, and
 * the repositories convert it; every other column is text or int4.
 */
export function createPostgresDialect (url: string, { poolMax = 10, onError = logToStderr }: PostgresOptions = {}): PostgresDialect {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    application_name: 'gatehouse'
  })
  // an idle connection that breaks emits 'error' on the pool; unhandled, it would end the process
  pool.on('error', onError)
  // a checked-out client whose socket breaks emits 'error' too, with no pool listener then; its
  // running query fails with the same error (and becomes a 503), so this one only keeps the process up
  pool.on('connect', (client) => { client.on('error', ignore) })
  return new AvailabilityDialect({ pool }, onError)
}

/** SQLSTATE classes and codes that say the server is gone or not taking connections, not that a query was wrong. */
const UNAVAILABLE_STATES = /^(08|57P0[123]$|53300$)/
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
/** node-postgres reports a dropped or timed-out connection by message only. */
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/

export function isUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true
  return UNAVAILABLE_MESSAGES.test(err.message)
}

/**
 * A database outage is the service's trouble, not the client's and not a bug: every query
 * failing for it becomes 503 service_unavailable (logged through `onError`), so a route that
 * needs the database answers 503 instead of 500 while PostgreSQL is away, and recovers with it.
 */
class AvailabilityDialect extends PostgresDialect {
  constructor (config: ConstructorParameters<typeof PostgresDialect>[0], private readonly onError: (err: Error) => void) { super(config) }

  override createDriver (): Driver {
    return new AvailabilityDriver(super.createDriver(), this.onError)
  }
}

class AvailabilityDriver implements Driver {
  /** Kysely's driver releases its own connection objects only, so the wrappers map back to them. */
  private readonly inner = new WeakMap<DatabaseConnection, DatabaseConnection>()

  constructor (private readonly driver: Driver, private readonly onError: (err: Error) => void) {}

  private translate (err: unknown): unknown {
    if (!isUnavailable(err)) return err
    this.onError(err as Error)
    return new ServiceUnavailable()
  }

  private async guard<T> (run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      throw this.translate(err)
    }
  }

  async init (): Promise<void> { await this.driver.init() }

  async acquireConnection (): Promise<DatabaseConnection> {
    const connection = await this.guard(async () => await this.driver.acquireConnection())
    const wrapped: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => await this.guard(async () => await connection.executeQuery<R>(query)),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => connection.streamQuery<R>(query, chunkSize)
    }
    this.inner.set(wrapped, connection)
    return wrapped
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.driver.beginTransaction(connection, settings)
  }

  async commitTransaction (connection: DatabaseConnection): Promise<void> { await this.driver.commitTransaction(connection) }
  async rollbackTransaction (connection: DatabaseConnection): Promise<void> { await this.driver.rollbackTransaction(connection) }

  async releaseConnection (connection: DatabaseConnection): Promise<void> {
    await this.driver.releaseConnection(this.inner.get(connection) ?? connection)
  }

  async destroy (): Promise<void> { await this.driver.destroy() }
}

function ignore (): void {}

function logToStderr (err: Error): void {
  process.stderr.write(`gatehouse: PostgreSQL connection error: ${err.message}\n`)
}
