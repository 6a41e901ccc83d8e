import type { Redis } from 'ioredis'
import type { AuditSink } from './events.js'
import { AuthService } from './accounts/sign-in.js'
import { BreachedPasswords } from './breached-passwords/breached-passwords.js'
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
import type { PasskeyService } from './passkeys/passkey-service.js'
import { normalizeEmail, UserService } from './accounts/users.js'
import { RecentAuthentication } from './accounts/recent-auth.js'
import { PasswordCheck } from './accounts/password-check.js'
import { Credentials } from './accounts/credentials.js'
import { IdentityList } from './accounts/identities.js'
import { mailConfigured } from './config/mail.js'
import type { CoreLogger } from './logging/logger.js'
import { ServiceEvents } from './events.js'
import { ImportService } from './imports/import-service.js'
import { createApiKeys, type ApiKeys } from './api-keys/index.js'
import { createOidc, type OidcServices } from './oidc/provider.js'
import type { IdpServices } from './idp/index.js'

export type ServiceLogger = CoreLogger

export interface ServiceOptions {
  config: Config
  store: Store
  log: ServiceLogger
  counters?: CounterStore
  events?: ServiceEvents
  mailTransport?: TransportOptions
  /** wall clock, ms (tests set one that is off) */
  clock?: () => number
  redis?: Redis | undefined
  /** A `command` (the short-lived CLI) only runs the broadcast of what it changed, published at close. */
  role?: 'server' | 'command'
  /** ms between discovery attempts of an identity provider whose discovery failed (a minute; tests shorten it) */
  idpRetryInterval?: number
}

export interface Services {
  events: ServiceEvents
  hasher: PasswordHasher
  tokens: TokenIssuer
  revocations: RevocationIndex
  throttles: AuthThrottles
  sessions: SessionService
  users: UserService
  auth: AuthService
  /** the check of the changes that need a recent sign-in or the password again (REAUTH_MAX_AGE) */
  recentAuth: RecentAuthentication
  keys: KeyService
  /** After a transaction that enqueued mail commits, call `mail.wake()` so it goes out now, not at the next poll. */
  mail: MailSender
  recovery: RecoveryService
  twoFactor: TwoFactorService | undefined
  /** `gatehouse user import` and POST /api/users/import */
  imports: ImportService
  /** BREACHED_PASSWORDS_FILE's blocklist, open; undefined when unset */
  breachedPasswords: BreachedPasswords | undefined
  /** undefined while ENABLE_PASSKEYS is off */
  passkeys: PasskeyService | undefined
  /** ENABLE_IDP_LOGIN: the users' connected accounts at identity providers, listed and disconnected; undefined when off */
  identities: IdentityList | undefined
  /** ENABLE_API_KEYS: API keys and service accounts (docs/api-keys.md); undefined when off */
  apiKeys: ApiKeys | undefined
  /** ENABLE_OIDC_PROVIDER: the clients, their administration and the users' grants; undefined when off */
  oidc: OidcServices | undefined
  /** ENABLE_IDP_LOGIN: sign-in through external identity providers (docs/identity-providers.md); undefined when off */
  idp: IdpServices | undefined
  bootstrapAdmin (): Promise<void>
  /** Starts in order; a start that fails stops what it had started before it rejects. */
  start (): Promise<void>
  /** Call once nothing takes new requests, before the store and Redis close; idempotent. */
  close (): Promise<void>
}

/** The framework-free services, wired once: the server and the CLI share one code path. */
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
  const passwords = new PasswordCheck({ store, hasher, audit, throttle: throttles.password })
  const envelope = config.dataEncryptionKeys === undefined ? undefined : new Envelope(config.dataEncryptionKeys)
  const mail = new MailSender({ outbox: store.mailOutbox, transport: createMailTransport(config.mail, config.production, log, mailTransport), events, log })
  // config-totp.ts guarantees the keys whenever TOTP is on; otpauth and qrcode are loaded only then
  const twoFactor = config.totp === undefined || envelope === undefined
    ? undefined
    : new (await import('./two-factor/two-factor-service.js')).TwoFactorService({
      store,
      passwords,
      sessions,
      envelope,
      dataKeys: config.dataEncryptionKeys ?? [],
      throttles,
      bound: new AccountBound({ store: counters, max: config.totp.maxFailures, windowMs: config.totp.failureWindow * 1000, name: 'second_factor_failures', events }),
      audit,
      issuer: config.totp.issuer,
      notify: mailConfigured(config),
      passkeys: config.passkeys !== undefined,
      queued: () => { mail.wake() },
      clock
    }, config.jwtSecret)
  const providers = config.idp?.providers ?? []
  const credentials = new Credentials({ passkeys: config.passkeys !== undefined, providers: providers.map((p) => p.id) })
  const identities = config.idp === undefined
    ? undefined
    : new IdentityList({ store, audit, credentials, providers, notify: mailConfigured(config), queued: () => { mail.wake() } })
  // config.ts asks DATA_ENCRYPTION_KEYS (generated in development) whenever passkeys are on; the library is loaded only then
  const passkeys = config.passkeys === undefined
    ? undefined
    : new (await import('./passkeys/passkey-service.js')).PasskeyService({
      store, sessions, twoFactor, audit, credentials, settings: config.passkeys, dataKeys: config.dataEncryptionKeys ?? [], notify: mailConfigured(config), queued: () => { mail.wake() }, clock
    })
  const auth = new AuthService({ store, hasher, passwords, users, sessions, audit, throttles, twoFactor })
  const recentAuth = new RecentAuthentication({ store, passwords, audit, maxAge: config.reauthMaxAge, clock })
  const changes = new KeyChanges(config.redisPrefix)
  const keys = new KeyService({ store, config, ring, envelope, audit, changes, onRevoked: () => { tokens.cache.clear(); oidc?.flow.tokens.verified.clear() }, log })
  const recovery = new RecoveryService({
    store, hasher, secrets: new SecretHasher(config.jwtSecret), sessions, counters, settings: config, audit, log, queued: () => { mail.wake() }, twoFactor, signIns: throttles.login, events
  })

  const apiKeys = createApiKeys({ config, store, sessions, recentAuth, index: revocations, audit, counters, events, log })

  async function bootstrapAdmin (): Promise<void> {
    if (config.admin !== undefined) await bootstrapAdminUser(users, config.admin, log)
  }
  const oidc = createOidc({ config, store, counters, audit, clock, core: ring && { ring, tokens, sessions, revocations } })
  // openid-client is loaded only with the feature on
  const idp = config.idp === undefined
    ? undefined
    : (await import('./idp/index.js')).createIdp({ config, store, users, sessions, twoFactor, audit, log, retryInterval: options.idpRetryInterval })
  const breachedPasswords = config.breachedPasswords && BreachedPasswords.open(config.breachedPasswords.file, events)
  const imports = new ImportService({ store, hasher, audit, defaultRoles: config.defaultRoles, withDetails: config.validationErrorDetails, breached: breachedPasswords })
  const services = { events, hasher, tokens, revocations, throttles, sessions, users, auth, recentAuth, keys, mail, recovery, twoFactor, passkeys, identities, apiKeys, oidc, idp, imports, breachedPasswords, bootstrapAdmin }
  return { ...services, ...lifecycle(services, changes, options) }
}

type Running = Pick<Services, 'revocations' | 'keys' | 'mail' | 'recovery' | 'breachedPasswords' | 'oidc' | 'idp' | 'bootstrapAdmin'>

function lifecycle (services: Running, changes: KeyChanges, { config, store, log, redis, clock, role = 'server' }: ServiceOptions): Pick<Services, 'start' | 'close'> {
  const { revocations: index, keys, mail, recovery } = services
  const running: Array<() => Promise<void>> = []
  let closed = false
  async function close (): Promise<void> {
    await recovery.settled()
    for (let stop = running.pop(); stop !== undefined; stop = running.pop()) await stop()
    if (!closed) services.breachedPasswords?.close()
    closed = true
  }
  async function start (): Promise<void> {
    try {
      // a client_id both in OIDC_CLIENTS_FILE and in the database stops the start
      await services.oidc?.clients.start()
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
      // a provider that cannot be discovered is hidden and retried; it never stops the start
      const upstreams = services.idp?.upstreams
      if (upstreams !== undefined) {
        await upstreams.start()
        running.push(async () => { await upstreams.close() })
      }
      await services.bootstrapAdmin()
    } catch (err) {
      await close()
      throw err
    }
  }
  return { start, close }
}

// the addresses each account signed in from get a store of their own in memory, so a flood cannot evict them
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

async function bootstrapAdminUser (users: UserService, admin: { email: string, password: string }, log: ServiceLogger): Promise<void> {
  const email = normalizeEmail(admin.email)
  const outcome = await users.bootstrapAdmin(email, admin.password)
  if (outcome === 'created') log.info({ email }, 'created the admin user')
  if (outcome !== 'taken') return
  log.warn({ email }, `ADMIN_EMAIL ${email} belongs to an existing account that is not a superuser: it was not promoted and no superuser was created. ` +
    'Set ADMIN_EMAIL to an address no account uses and restart, or create a superuser with `gatehouse user create --email <email> --name <name> --superuser`.')
}
