import type { Redis } from 'ioredis'
import type { AuditSink } from './events.js'
import { AuthService } from './accounts/sign-in.js'
import type { Config } from './config/config.js'
import type { Store } from './db/store.js'
import { MailSender } from './mail/sender.js'
import { createMailTransport, type TransportOptions } from './mail/transport.js'
import { SecretHasher } from './crypto/one-time-secrets.js'
import { PasswordHasher } from './crypto/passwords.js'
import { RecoveryService } from './recovery/recovery-service.js'
import { RevocationIndex } from './revocations/revocation-index.js'
import { deferRevocations, startRevocations } from './revocations/start.js'
import { SessionService } from './sessions/session-service.js'
import { FailureThrottle, MemoryCounterStore, type AuthThrottles, type CounterStore } from './limits/throttle.js'
import { AccountBound } from './limits/account-bound.js'
import { Envelope } from './crypto/envelope.js'
import { KeyChanges } from './keys/key-changes.js'
import { KeyRing } from './keys/key-ring.js'
import { KeyService } from './keys/key-service.js'
import { ACCESS_TOKEN_TYP, createTokenCodec, REQUIRED_CLAIMS } from './tokens/codec.js'
import { TokenIssuer } from './tokens/issuer.js'
import type { TwoFactorService } from './two-factor/two-factor-service.js'
import { normalizeEmail, UserService } from './accounts/users.js'
import { mailConfigured } from './config/mail.js'
import type { CoreLogger } from './logging/logger.js'
import { ServiceEvents } from './events.js'

/** The part of a pino logger the services write to. */
export type ServiceLogger = CoreLogger

export interface ServiceOptions {
  config: Config
  store: Store
  log: ServiceLogger
  /** the counters behind the failure throttles (shared through Redis when configured); in memory by default */
  counters?: CounterStore
  /** the hub the services report to; a fresh one by default */
  events?: ServiceEvents
  /** options of the SMTP transport (tests trust the CA of their self-signed certificate) */
  mailTransport?: TransportOptions
  /** this instance's wall clock, ms since the epoch: which TOTP time step is current and which revocations have expired (tests set one that is off) */
  clock?: () => number
  /** the shared REDIS_URL connection, when configured: revocations and key changes are broadcast through it */
  redis?: Redis | undefined
  /**
   * What start() runs: a `server` everything below; a `command` (the CLI, a short-lived process)
   * only the broadcast of the revocations and key changes it made, published at close.
   */
  role?: 'server' | 'command'
}

export interface Services {
  events: ServiceEvents
  hasher: PasswordHasher
  tokens: TokenIssuer
  /** revoked sessions, read on every guarded request; loaded and kept in sync by start() (src/revocations) */
  revocations: RevocationIndex
  throttles: AuthThrottles
  sessions: SessionService
  users: UserService
  auth: AuthService
  /** the asymmetric signing keys (list, rotate, revoke); loaded and rotated by a server's start() */
  keys: KeyService
  /**
   * Delivers the mail outbox (src/mail/sender.ts); a server's start() runs it. After a transaction
   * that enqueued mail has committed, call `mail.wake()` so it goes out at once rather than at the next poll.
   */
  mail: MailSender
  /** password reset and email codes; the routes exist only with their switches on */
  recovery: RecoveryService
  /** TOTP two-factor sign-in; undefined while ENABLE_TOTP is off */
  twoFactor: TwoFactorService | undefined
  /** ADMIN_EMAIL/ADMIN_PASSWORD: creates the superuser when missing (a server's start() calls it) */
  bootstrapAdmin (): Promise<void>
  /**
   * Starts what runs in the background, in order: the revocation index loaded and kept in step
   * with the other instances (with the signing keys' own channel), the signing keys loaded and
   * their rotation timer, the mail sender, the admin bootstrap. A start that fails stops what it
   * had started before it rejects.
   */
  start (): Promise<void>
  /**
   * Waits for the recovery work answered requests left running, then stops what start() started
   * in reverse order (the mail sender finishing its deliveries). Call it once nothing takes new
   * requests, before the store and Redis close; a second call does nothing. A command's close
   * rejects when its broadcast failed (what it changed is stored all the same).
   */
  close (): Promise<void>
}

/**
 * The framework-free services, wired once: the server (plugins/services.ts) and the CLI both
 * build them here, so a user is created by one code path whoever asks. Nothing runs until
 * start(); listening belongs to the server.
 */
export async function createServices (options: ServiceOptions): Promise<Services> {
  const { config, store, log, counters = new MemoryCounterStore(), events = new ServiceEvents(), mailTransport, clock = Date.now } = options
  const hasher = PasswordHasher.create(config.argon2, events)
  const ring = config.jwtAlg === 'HS256'
    ? undefined
    : new KeyRing(config.jwtAlg, { issuer: config.jwtIssuer, audience: config.jwtAudience, requiredClaims: REQUIRED_CLAIMS, typ: ACCESS_TOKEN_TYP })
  const tokens = new TokenIssuer(
    createTokenCodec(config.jwtSecret, config.jwtIssuer, { audience: config.jwtAudience, ring }),
    { issuer: config.jwtIssuer, accessTtl: config.accessTtl, refreshTtl: config.refreshTtl },
    { maxEntries: config.tokenCacheSize }
  )
  const audit: AuditSink = (record, context) => { events.emit('audit', { record, context }) }
  const revocations = new RevocationIndex()
  const throttles = createThrottles(config, counters, events)
  const sessions = new SessionService({ store, tokens, index: revocations, settings: config, audit })
  const users = new UserService(store, hasher, sessions, audit)
  const envelope = config.dataEncryptionKeys === undefined ? undefined : new Envelope(config.dataEncryptionKeys)
  const mail = new MailSender({ outbox: store.mailOutbox, transport: createMailTransport(config.mail, config.production, log, mailTransport), events, log })
  // config-totp.ts guarantees the keys whenever TOTP is on; otpauth and qrcode are loaded only then
  const twoFactor = config.totp === undefined || envelope === undefined
    ? undefined
    : new (await import('./two-factor/two-factor-service.js')).TwoFactorService({
      store,
      hasher,
      sessions,
      envelope,
      dataKeys: config.dataEncryptionKeys ?? [],
      throttles,
      bound: new AccountBound({ store: counters, max: config.totp.maxFailures, windowMs: config.totp.failureWindow * 1000, name: 'second_factor_failures', events }),
      audit,
      issuer: config.totp.issuer,
      notify: mailConfigured(config),
      queued: () => { mail.wake() },
      clock
    }, config.jwtSecret)
  const auth = new AuthService({ store, hasher, users, sessions, audit, throttles, twoFactor })
  const changes = new KeyChanges(config.redisPrefix)
  const keys = new KeyService({ store, config, ring, envelope, audit, changes, onRevoked: () => { tokens.cache.clear() }, log })
  const recovery = new RecoveryService({
    store, hasher, secrets: new SecretHasher(config.jwtSecret), sessions, counters, settings: config, audit, log, queued: () => { mail.wake() }, twoFactor, signIns: throttles.login, events
  })

  async function bootstrapAdmin (): Promise<void> {
    if (config.admin !== undefined) await bootstrapAdminUser(users, config.admin, log)
  }
  const services = { events, hasher, tokens, revocations, throttles, sessions, users, auth, keys, mail, recovery, twoFactor, bootstrapAdmin }
  return { ...services, ...lifecycle(services, changes, options) }
}

type Running = Pick<Services, 'revocations' | 'keys' | 'mail' | 'recovery' | 'bootstrapAdmin'>

/** start() and close() over one stack: what started last stops first, and a failed start stops what it had started. */
function lifecycle (services: Running, changes: KeyChanges, { config, store, log, redis, clock, role = 'server' }: ServiceOptions): Pick<Services, 'start' | 'close'> {
  const { revocations: index, keys, mail, recovery } = services
  const running: Array<() => Promise<void>> = []
  async function close (): Promise<void> {
    await recovery.settled()
    for (let stop = running.pop(); stop !== undefined; stop = running.pop()) await stop()
  }
  async function start (): Promise<void> {
    try {
      if (role === 'command') {
        const deferred = deferRevocations({ index, config, feeds: [changes] })
        running.push(async () => { await deferred.close() })
        return
      }
      const sync = await startRevocations({ index, store, config, log, redis, clock, feeds: [changes] })
      running.push(async () => { await sync.close() })
      // after the sync: a key change made elsewhere while the keys load is heard
      await keys.start()
      running.push(async () => { keys.close() })
      mail.start()
      running.push(async () => { await mail.close() })
      await services.bootstrapAdmin()
    } catch (err) {
      await close()
      throw err
    }
  }
  return { start, close }
}

/**
 * The two failure throttles over the same counters (their keys differ by prefix). The addresses
 * each account signed in from are kept apart when the counters are this process's memory, so a
 * flood of failure counters cannot evict them; Redis keeps them beside the counters.
 */
function createThrottles (config: Config, counters: CounterStore, events: ServiceEvents): AuthThrottles {
  const limits = {
    max: config.loginMaxFailures,
    windowMs: config.loginFailureWindow * 1000,
    accountMax: config.loginAccountMaxFailures,
    accountWindowMs: config.loginAccountFailureWindow * 1000,
    ipv6Prefix: config.ipv6SubnetPrefix
  }
  const owned = counters instanceof MemoryCounterStore ? new MemoryCounterStore() : counters
  return {
    login: new FailureThrottle({ store: counters, limits, name: 'login_failures', events, owned }),
    password: new FailureThrottle({ store: counters, limits, name: 'password_failures', events, owned })
  }
}

/** Creates the ADMIN_EMAIL superuser when missing; an address held by an ordinary account is only reported. */
async function bootstrapAdminUser (users: UserService, admin: { email: string, password: string }, log: ServiceLogger): Promise<void> {
  const email = normalizeEmail(admin.email)
  const outcome = await users.bootstrapAdmin(email, admin.password)
  if (outcome === 'created') log.info({ email }, 'created the admin user')
  if (outcome !== 'taken') return
  log.warn({ email }, `ADMIN_EMAIL ${email} belongs to an existing account that is not a superuser: it was not promoted and no superuser was created. ` +
    'Set ADMIN_EMAIL to an address no account uses and restart, or create a superuser with `gatehouse user create --email <email> --name <name> --superuser`.')
}
