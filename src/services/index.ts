import type { AuditSink } from '../audit.js'
import { AuthService, type AuthThrottles } from '../auth.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { PasswordHasher } from '../passwords.js'
import { RevocationIndex } from '../revocations/revocation-index.js'
import { SessionService } from '../sessions.js'
import { FailureThrottle, MemoryCounterStore, type CounterStore } from '../throttle.js'
import { createTokenCodec } from '../token-codec.js'
import { TokenIssuer } from '../tokens.js'
import { UserService } from '../users.js'
import { ServiceEvents } from './events.js'

/** The part of a pino logger the services write to. */
export interface ServiceLogger { info (fields: object, message: string): void }

export interface ServiceOptions {
  config: Config
  store: Store
  log: ServiceLogger
  /** the counters behind the failure throttles (shared through Redis when configured); in memory by default */
  counters?: CounterStore
  /** the hub the services report to; a fresh one by default */
  events?: ServiceEvents
}

export interface Services {
  events: ServiceEvents
  hasher: PasswordHasher
  tokens: TokenIssuer
  /** revoked sessions, read on every guarded request; loaded and kept in sync by src/revocations */
  revocations: RevocationIndex
  throttles: AuthThrottles
  sessions: SessionService
  users: UserService
  auth: AuthService
  /** ADMIN_EMAIL/ADMIN_PASSWORD: creates the superuser when missing (the server calls it at start) */
  bootstrapAdmin (): Promise<void>
}

/**
 * The framework-free services, wired once: the server (plugins/services.ts) and the CLI both
 * build them here, so a user is created by one code path whoever asks. Nothing starts running:
 * revocation loading and sync belong to src/revocations, listening to the server.
 */
export async function createServices ({ config, store, log, counters = new MemoryCounterStore(), events = new ServiceEvents() }: ServiceOptions): Promise<Services> {
  const hasher = await PasswordHasher.create(config.argon2, events)
  const tokens = new TokenIssuer(
    createTokenCodec(config.jwtSecret, config.jwtIssuer),
    { issuer: config.jwtIssuer, accessTtl: config.accessTtl, refreshTtl: config.refreshTtl },
    { maxEntries: config.tokenCacheSize }
  )
  const audit: AuditSink = (record, context) => { events.emit('audit', { record, context }) }
  const revocations = new RevocationIndex()
  const windowMs = config.loginFailureWindow * 1000
  const throttles: AuthThrottles = {
    login: new FailureThrottle(counters, config.loginMaxFailures, windowMs, 'login_failures', events),
    password: new FailureThrottle(counters, config.loginMaxFailures, windowMs, 'password_failures', events)
  }
  const sessions = new SessionService(store, tokens, revocations, config, audit)
  const users = new UserService(store, hasher, sessions, audit)
  const auth = new AuthService(store, hasher, users, sessions, audit, throttles)

  async function bootstrapAdmin (): Promise<void> {
    if (config.admin !== undefined && await users.bootstrapAdmin(config.admin.email, config.admin.password)) {
      log.info({ email: config.admin.email }, 'created the admin user')
    }
  }
  return { events, hasher, tokens, revocations, throttles, sessions, users, auth, bootstrapAdmin }
}
