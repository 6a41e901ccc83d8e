import { AuditTrail } from '../observers/audit-trail.js'
import { CLI_CONTEXT } from '../events.js'
import { loadConfig, type Config } from '../config/config.js'
import { takeNotices } from '../config/notices.js'
import { connect, type Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { createServices, type Services } from '../services.js'
import type { Requester } from '../accounts/users.js'
import { Forbidden, ValidationFailed } from '../errors.js'
import { Failure } from './failure.js'

export interface CliContext {
  config: Config
  store: Store
  services: Services
  /** the command line as the audit trail names it: no actor, the address `cli` */
  requester: Requester
  /** the migrations opening the database applied */
  migrated: string[]
  /** the user an `<email|id>` argument names, or a Failure */
  userOf (reference: string): Promise<User>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** DATABASE_URL without its password, for a message. */
function shown (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.protocol === 'sqlite:' ? url : parsed.toString()
  } catch {
    return url.split(':', 1)[0] ?? 'DATABASE_URL'
  }
}

/**
 * An error's message on one line; a driver's error without one (an AggregateError of refused
 * connections) by its code; a service's refusal with its detail, a field named by the command's option.
 */
export function oneLine (err: unknown, fieldOptions: Record<string, string> = {}): string {
  if (err instanceof ValidationFailed) return Object.entries(err.errors).map(([field, messages]) => `${fieldOptions[field] === undefined ? '' : `${fieldOptions[field]}: `}${messages.join('; ')}`).join('; ')
  if (err instanceof Forbidden && err.requiredRoles !== undefined) return `${err.message} (${err.reason}): the account does not hold ${err.requiredRoles.join(', ')}`
  const e = err as { message?: string, code?: string, errors?: unknown[] }
  const message = e.message !== undefined && e.message !== '' ? e.message : e.errors?.[0] !== undefined ? oneLine(e.errors[0]) : e.code ?? String(err)
  return message.replace(/\s*\n\s*/g, ' ')
}

/**
 * What a command works with, opened on first use: the configuration (the server's settings),
 * the database (migrated, as the server does at start) and the server's own services, started
 * as a command (src/services.ts), whose audit events go to the same trail. `close` closes the
 * services, which tells the running servers of the revocations and key changes made (Redis, when
 * configured; without it they read them from the database within a second), writes the pending
 * audit rows and closes the database.
 */
export class CliSession {
  private opened: Promise<CliContext> | undefined
  private trail: AuditTrail | undefined

  readonly context = async (): Promise<CliContext> => {
    this.opened ??= this.open()
    return await this.opened
  }

  private async open (): Promise<CliContext> {
    const config = loadConfig()
    for (const message of takeNotices()) process.stderr.write(`gatehouse: ${message}\n`)
    let store: Store
    // the driver's own error (a refused connection) names the cause better than the 503 the store makes of it
    let driverError: Error | undefined
    try {
      store = await connect(config.databaseUrl, { poolMax: 2, onError: (err) => { driverError = err } })
    } catch (err) {
      throw new Failure(`database ${shown(config.databaseUrl)}: ${oneLine(err)}`)
    }
    let migrated: string[]
    try {
      migrated = await store.migrate()
    } catch (err) {
      await store.close().catch(() => {})
      throw new Failure(`database ${shown(config.databaseUrl)} unreachable: ${oneLine(driverError ?? err)}`)
    }
    const quiet = { info () {}, warn () {}, error () {} }
    const services = await createServices({ config, store, log: quiet, role: 'command' })
    const trail = new AuditTrail(store, { info () {}, error (_fields, message) { process.stderr.write(`gatehouse: ${message}\n`) } })
    services.events.on('audit', ({ record, context }) => { trail.sink(record, context) })
    await services.start()
    this.trail = trail
    const userOf = async (reference: string): Promise<User> => {
      const user = UUID.test(reference) ? await services.users.findById(reference.toLowerCase()) : await services.users.findByEmail(reference)
      if (user === undefined) throw new Failure(`no user ${reference}`)
      return user
    }
    return { config, store, services, requester: { context: CLI_CONTEXT }, migrated, userOf }
  }

  async close (): Promise<void> {
    if (this.opened === undefined) return
    let context: CliContext
    try {
      context = await this.opened
    } catch {
      return
    }
    try {
      await context.services.close()
    } catch (err) {
      process.stderr.write(`gatehouse: warning: the revocations and key changes were stored but not broadcast (${oneLine(err)}); servers read them once Redis is back\n`)
    }
    await this.trail?.flush()
    await context.store.close()
  }
}
