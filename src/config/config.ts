import { join, resolve } from 'node:path'
import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { authzConfig, AuthzSettings, type AuthzConfig } from './authz.js'
import { ConfigError } from '../errors.js'
import { KeysConfigSchema, keysSettings, type KeysConfig } from './keys.js'
import { durationSetting, parseDuration, parseRate, rateSetting } from './units.js'
import { mailSettings, MailSettingsSchema, type MailConfig } from './mail.js'
import { RecoveryConfigSchema, recoverySettings, type RecoveryConfig } from './recovery.js'
import { TotpConfigSchema, totpSettings, type TotpConfig } from './totp.js'
import { resolveSecret } from './jwt-secret.js'
import { sessionsConfig, SessionsSettings, type SessionsConfig } from './sessions.js'
import { parseTrustProxy, TrustProxySettings } from './trust-proxy.js'

const RoleList = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}(,[a-z][a-z0-9_-]{0,31})*$', maxLength: 1024 })

const flag = (description: string) => Type.Boolean({ default: false, description })
const duration = (value: string, description: string) => durationSetting(description, value)
const rate = (value: string, description: string) => rateSetting(description, value)

/**
 * Every setting, each with the description that docs/operations.md and .env.example are generated
 * from (`npm run docs:config`); the Config type is derived from it, never hand-written.
 */
export const ConfigSchema = Type.Object({
  APP_ENV: Type.Union([Type.Literal('development'), Type.Literal('production')], {
    default: 'development',
    description: '`production` requires a strong `JWT_SECRET` and sets `Secure` on cookies and HSTS on answers'
  }),
  JWT_SECRET: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'the HS256 signing key: at least 32 bytes, and in production at least 8 distinct characters and an ' +
      'estimated 128 bits of entropy, so nothing patterned or made of words (`openssl rand -base64 32`). Unset in development: a key is generated once into `DATA_DIR/jwt-secret` ' +
      '(mode 0600, exactly the key), with a warning; unset in production: the server refuses to start'
  })),
  JWT_ISSUER: Type.String({ default: 'gatehouse', minLength: 1, maxLength: 256, description: 'the `iss` claim signed and required' }),
  ...KeysConfigSchema,
  ENABLE_REGISTER: flag('`true` enables `POST /auth/register`'),
  DATA_DIR: Type.String({
    default: './data',
    minLength: 1,
    description: 'where the default SQLite file and the development secret live; created with mode 0700'
  }),
  DATABASE_URL: Type.Optional(Type.String({
    pattern: '^(sqlite:|postgres(ql)?://)',
    maxLength: 4096,
    examples: ['postgres://gatehouse:password@db.internal:5432/gatehouse'],
    description: '`sqlite:<path>` (files mode 0600), `sqlite::memory:` or `postgres://…`; unset: `sqlite:<DATA_DIR>/gatehouse.db`'
  })),
  DATABASE_POOL_MAX: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description: 'PostgreSQL connections per process: instances × `WORKERS` × this must stay under the server\'s `max_connections`'
  }),
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    maxLength: 4096,
    examples: ['redis://redis.internal:6379'],
    description: '`redis://…` or `rediss://…`: rate-limit counters and the revocation broadcast shared between instances'
  })),
  REDIS_PREFIX: Type.String({
    default: 'gatehouse:',
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    description: 'prefix of every Redis key and of the revocation channel, so several deployments (or test runs) can share one Redis'
  }),
  REVOCATION_POLL_MS: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 60000,
    description: 'milliseconds between reads of new revocations from the database when no Redis carries them: ' +
      'unset means 250, on SQLite too, so a revocation made by another process (a worker, the command line) is heard; `0` never polls'
  })),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'the TCP port to listen on' }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'the address to listen on (`0.0.0.0` for every interface)' }),
  WORKERS: Type.Integer({
    default: 1,
    minimum: 1,
    maximum: 64,
    description: 'worker processes (node:cluster) sharing `PORT`; more than one needs nothing else on SQLite or PostgreSQL'
  }),
  ACCESS_TOKEN_TTL: duration('15m', 'lifetime of an access token'),
  REFRESH_TOKEN_TTL: duration('7d', 'lifetime of a refresh token; longer than `ACCESS_TOKEN_TTL`'),
  REFRESH_REUSE_INTERVAL: duration('10s', 'grace interval in which the refresh token just spent may be presented again (two tabs racing)'),
  SESSION_MAX_AGE: duration('30d', 'absolute lifetime of a session: refreshes extend it up to this age from sign-in, never beyond (no token of it expires later); at least `ACCESS_TOKEN_TTL`'),
  ...SessionsSettings,
  LOGIN_MAX_FAILURES: Type.Integer({
    default: 5,
    minimum: 1,
    description: 'failed sign-ins for one email from one address within `LOGIN_FAILURE_WINDOW` after which ' +
      'that pair gets 429 (even with the right password) until the window passes; a success resets the count'
  }),
  LOGIN_FAILURE_WINDOW: duration('15m', 'the window of `LOGIN_MAX_FAILURES`'),
  LOGIN_ACCOUNT_MAX_FAILURES: Type.Integer({
    default: 50,
    minimum: 1,
    description: 'failed sign-ins for one account within `LOGIN_ACCOUNT_FAILURE_WINDOW`, whatever the address, after which ' +
      'every address the account has not signed in from in the last 30 days gets 429 until the window passes'
  }),
  LOGIN_ACCOUNT_FAILURE_WINDOW: duration('1h', 'the window of `LOGIN_ACCOUNT_MAX_FAILURES`'),
  IPV6_SUBNET_PREFIX: Type.Integer({
    default: 64,
    minimum: 1,
    maximum: 128,
    description: 'per-address limits (`LOGIN_MAX_FAILURES`, `LOGIN_RATE_LIMIT`, `REFRESH_RATE_LIMIT`) count an IPv6 client ' +
      'by this many leading bits of its address, since one subscriber usually holds a whole /64'
  }),
  LOGIN_RATE_LIMIT: rate('60/m', 'sign-in attempts per client address whatever the email; register and change-password count against it too'),
  REFRESH_RATE_LIMIT: rate('120/m', 'refresh attempts per client address'),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(false|[0-9]+|[0-9a-fA-F:.,/ ]+)$',
    maxLength: 1024,
    description: 'whether `X-Forwarded-For` is believed: `false`, a hop count, or a comma-separated list of proxy ' +
      'addresses and networks. `true`, `/0` and lists that together cover every address are refused, and so are ' +
      'networks wider than an IPv4 /8 or an IPv6 /32 unless `TRUST_PROXY_ALLOW_WIDE=true`'
  }),
  ...TrustProxySettings,
  REQUEST_TIMEOUT: duration('30s', 'a whole request (and an idle connection) is cut after this; headers must arrive within 10 s'),
  MAX_EVENT_LOOP_DELAY: Type.Integer({
    default: 1000,
    minimum: 0,
    maximum: 60000,
    description: 'milliseconds of mean event-loop delay past which requests are shed with 503 `service_unavailable` ' +
      'and `Retry-After: 10`; `0` turns shedding off'
  }),
  ADMIN_EMAIL: Type.Optional(Type.String({
    pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
    maxLength: 254,
    examples: ['admin@example.com'],
    description: 'with `ADMIN_PASSWORD`: a superuser (roles `admin`, name `Administrator`) with this email is created ' +
      'at start when missing — exactly one, even when several processes start at once. An address an ordinary account ' +
      'already holds is never promoted: the start creates no superuser and logs a warning'
  })),
  ADMIN_PASSWORD: Type.Optional(Type.String({
    minLength: 8,
    maxLength: 1024,
    description: 'the password of the `ADMIN_EMAIL` superuser; required when `ADMIN_EMAIL` is set'
  })),
  VALIDATION_ERROR_DETAILS: flag('`true` adds `details: [{field, tag, value, message}]` to 422 bodies'),
  DEFAULT_ROLES: Type.String({ ...RoleList, default: 'user', description: 'comma-separated roles given to new users' }),
  CORS_ORIGINS: Type.Optional(Type.String({
    maxLength: 4096,
    examples: ['https://app.example.com'],
    description: 'comma-separated browser origins allowed by CORS (credentials allowed) and trusted by the CSRF check'
  })),
  PUBLIC_URL: Type.Optional(Type.String({
    pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
    maxLength: 2048,
    examples: ['https://auth.example.com'],
    description: 'the URL clients reach the service at (its origin, and the path prefix a proxy adds), published as ' +
      'the `servers` entry of /openapi.json; unset, the document names the origin it was requested at'
  })),
  BODY_LIMIT: Type.Integer({ default: 65536, minimum: 1024, maximum: 10485760, description: 'largest request body in bytes; larger is 413' }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), {
    default: 'info',
    description: 'the least severe log level written'
  }),
  LOG_REQUESTS: flag('`true` writes one line per request; audit and error lines are written regardless'),
  ARGON2_MEMORY_COST: Type.Integer({
    default: 19456,
    minimum: 8,
    maximum: 4194304,
    description: 'argon2id memory in KiB (OWASP\'s minimum is 19 MiB); lower values weaken every stored hash'
  }),
  ARGON2_TIME_COST: Type.Integer({ default: 2, minimum: 1, maximum: 100, description: 'argon2id iterations (OWASP\'s minimum: 2)' }),
  ARGON2_PARALLELISM: Type.Integer({ default: 1, minimum: 1, maximum: 16, description: 'argon2id lanes (OWASP\'s minimum: 1)' }),
  TOKEN_CACHE_SIZE: Type.Integer({
    default: 10000,
    minimum: 0,
    maximum: 1000000,
    description: 'bound of the verified-token cache, whose entries never outlive their token\'s `exp`; `0` disables it'
  }),
  METRICS_ENABLED: flag('`true` serves Prometheus metrics at `GET /metrics` to a bearer of `METRICS_TOKEN`; off, that path is an unknown route (404)'),
  METRICS_TOKEN: Type.Optional(Type.String({
    minLength: 16,
    maxLength: 1024,
    description: 'the Bearer token a scraper presents at `/metrics`; required (at least 16 characters) when `METRICS_ENABLED=true`'
  })),
  ...MailSettingsSchema,
  ...RecoveryConfigSchema,
  ...AuthzSettings,
  ...TotpConfigSchema
})
type RawConfig = Static<typeof ConfigSchema>

export interface Config extends KeysConfig, RecoveryConfig, AuthzConfig, TotpConfig, SessionsConfig {
  env: RawConfig['APP_ENV']
  production: boolean
  jwtSecret: string
  jwtIssuer: string
  enableRegister: boolean
  dataDir: string
  databaseUrl: string
  databasePoolMax: number
  redisUrl: string | undefined
  redisPrefix: string
  /** undefined: poll only where the store is shared by nature (PostgreSQL) and Redis is absent */
  revocationPollMs: number | undefined
  port: number
  host: string
  workers: number
  accessTtl: number
  refreshTtl: number
  refreshReuseInterval: number
  sessionMaxAge: number
  loginMaxFailures: number
  loginFailureWindow: number
  loginAccountMaxFailures: number
  loginAccountFailureWindow: number
  ipv6SubnetPrefix: number
  loginRateLimit: { max: number, windowSeconds: number }
  refreshRateLimit: { max: number, windowSeconds: number }
  trustProxy: false | number | string
  requestTimeout: number
  maxEventLoopDelay: number
  admin: { email: string, password: string } | undefined
  validationErrorDetails: boolean
  defaultRoles: string[]
  corsOrigins: string[]
  publicUrl: string | undefined
  bodyLimit: number
  logLevel: RawConfig['LOG_LEVEL']
  logRequests: boolean
  argon2: { memoryCost: number, timeCost: number, parallelism: number }
  tokenCacheSize: number
  metrics: { token: string } | undefined
  /** SMTP_URL and MAIL_FROM (src/config/mail.ts) */
  mail: MailConfig
}

export { ConfigError }

export interface LoadOptions {
  /** Extra values, highest precedence (tests pass their whole config here). */
  values?: Record<string, unknown>
  /** Read process.env and .env (the server does; tests do not). */
  fromEnvironment?: boolean
}

/** Reads and validates the settings; a bad value throws a ConfigError naming the variable. */
export function loadConfig ({ values = {}, fromEnvironment = true }: LoadOptions = {}): Config {
  let raw: RawConfig
  try {
    raw = envSchema<RawConfig>({
      schema: structuredClone(ConfigSchema),
      data: values,
      env: fromEnvironment,
      dotenv: fromEnvironment
    })
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message.replaceAll('env/', '')}`)
  }
  const production = raw.APP_ENV === 'production'
  const dataDir = resolve(raw.DATA_DIR)
  const durations = checkDurations(raw)
  if (raw.ADMIN_EMAIL !== undefined && raw.ADMIN_PASSWORD === undefined) {
    throw new ConfigError('Invalid configuration: ADMIN_PASSWORD is required when ADMIN_EMAIL is set')
  }
  const keys = keysSettings(raw, production, dataDir)
  return {
    env: raw.APP_ENV,
    production,
    jwtSecret: resolveSecret(raw.JWT_SECRET, production, dataDir),
    jwtIssuer: raw.JWT_ISSUER,
    ...keys,
    ...totpSettings(raw, keys, production, dataDir),
    enableRegister: raw.ENABLE_REGISTER,
    dataDir,
    databaseUrl: raw.DATABASE_URL ?? `sqlite:${join(dataDir, 'gatehouse.db')}`,
    databasePoolMax: raw.DATABASE_POOL_MAX,
    redisUrl: raw.REDIS_URL,
    redisPrefix: raw.REDIS_PREFIX,
    revocationPollMs: raw.REVOCATION_POLL_MS,
    port: raw.PORT,
    host: raw.HOST,
    workers: raw.WORKERS,
    ...durations,
    loginMaxFailures: raw.LOGIN_MAX_FAILURES,
    loginAccountMaxFailures: raw.LOGIN_ACCOUNT_MAX_FAILURES,
    ipv6SubnetPrefix: raw.IPV6_SUBNET_PREFIX,
    loginRateLimit: parseRate(raw.LOGIN_RATE_LIMIT),
    refreshRateLimit: parseRate(raw.REFRESH_RATE_LIMIT),
    trustProxy: parseTrustProxy(raw.TRUST_PROXY, raw.TRUST_PROXY_ALLOW_WIDE),
    requestTimeout: parseDuration(raw.REQUEST_TIMEOUT),
    maxEventLoopDelay: raw.MAX_EVENT_LOOP_DELAY,
    admin: raw.ADMIN_EMAIL && raw.ADMIN_PASSWORD ? { email: raw.ADMIN_EMAIL, password: raw.ADMIN_PASSWORD } : undefined,
    validationErrorDetails: raw.VALIDATION_ERROR_DETAILS,
    defaultRoles: raw.DEFAULT_ROLES.split(','),
    corsOrigins: raw.CORS_ORIGINS ? raw.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean) : [],
    publicUrl: raw.PUBLIC_URL?.replace(/\/+$/, ''),
    bodyLimit: raw.BODY_LIMIT,
    logLevel: raw.LOG_LEVEL,
    logRequests: raw.LOG_REQUESTS,
    argon2: { memoryCost: raw.ARGON2_MEMORY_COST, timeCost: raw.ARGON2_TIME_COST, parallelism: raw.ARGON2_PARALLELISM },
    tokenCacheSize: raw.TOKEN_CACHE_SIZE,
    metrics: metricsSettings(raw),
    mail: mailSettings(raw, production),
    ...recoverySettings(raw, production),
    ...authzConfig(raw),
    ...sessionsConfig(raw)
  }
}

/** Metrics tell an outsider how many sign-ins fail and how busy the service is: never served unprotected. */
function metricsSettings (raw: RawConfig): Config['metrics'] {
  if (!raw.METRICS_ENABLED) return undefined
  if (raw.METRICS_TOKEN === undefined) throw new ConfigError('Invalid configuration: METRICS_TOKEN is required when METRICS_ENABLED=true')
  return { token: raw.METRICS_TOKEN }
}

function checkDurations (raw: RawConfig) {
  const values = {
    accessTtl: parseDuration(raw.ACCESS_TOKEN_TTL),
    refreshTtl: parseDuration(raw.REFRESH_TOKEN_TTL),
    refreshReuseInterval: parseDuration(raw.REFRESH_REUSE_INTERVAL),
    sessionMaxAge: parseDuration(raw.SESSION_MAX_AGE),
    loginFailureWindow: parseDuration(raw.LOGIN_FAILURE_WINDOW),
    loginAccountFailureWindow: parseDuration(raw.LOGIN_ACCOUNT_FAILURE_WINDOW)
  }
  if (values.accessTtl < 1) throw new ConfigError('Invalid configuration: ACCESS_TOKEN_TTL must be at least 1s')
  if (values.refreshTtl <= values.accessTtl) throw new ConfigError('Invalid configuration: REFRESH_TOKEN_TTL must be longer than ACCESS_TOKEN_TTL')
  if (values.sessionMaxAge < values.accessTtl) throw new ConfigError('Invalid configuration: SESSION_MAX_AGE must be at least ACCESS_TOKEN_TTL')
  return values
}
