import { PostgresDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely'
import pg from 'pg'
import { ServiceUnavailable } from '../errors.js'

export interface PostgresOptions {
  poolMax?: number
  onError?: (err: Error) => void
}

/** So /ready answers 503 instead of hanging. */
const CONNECT_TIMEOUT_MS = 2000
const STATEMENT_TIMEOUT_MS = 30_000
/** A transaction left open by a crashed request would hold its row locks until this. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000

/** Only int8 (`count(*)`) comes back as a string; the repositories convert it. */
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
  // a checked-out client's broken socket emits 'error' with no pool listener; its query fails on its own
  pool.on('connect', (client) => { client.on('error', ignore) })
  return new AvailabilityDialect({ pool }, onError)
}

/** SQLSTATE classes and codes that say the server is gone or not taking connections, not that a query was wrong. */
const UNAVAILABLE_STATES = /^(08|57P0[123]$|53300$)/
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/

export function isUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true
  return UNAVAILABLE_MESSAGES.test(err.message)
}

/** A database outage is 503 service_unavailable, not a 500: routes recover with PostgreSQL. */
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
