import { join, resolve } from 'node:path'
import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from './config-error.js'
import { resolveSecret } from './jwt-secret.js'
import { parseTrustProxy } from './trust-proxy.js'

const Duration = Type.String({ pattern: '^[0-9]+[smhd]?$', maxLength: 16 })
const Bool = Type.Boolean({ default: false })
const Rate = Type.String({ pattern: '^[0-9]+/[smh]$', maxLength: 16 })
const RoleList = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}(,[a-z][a-z0-9_-]{0,31})*$', maxLength: 1024 })

/** Every setting of SPEC §7 (and the few the issues add); the type is derived, never hand-written. */
export const ConfigSchema = Type.Object({
  APP_ENV: Type.Union([Type.Literal('development'), Type.Literal('production')], { default: 'development' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  JWT_ISSUER: Type.String({ default: 'gatehouse', minLength: 1, maxLength: 256 }),
  ENABLE_REGISTER: Bool,
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^(sqlite:|postgres(ql)?://)', maxLength: 4096 })),
  // PostgreSQL connections per process; instances × this must stay under the server's max_connections
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 1000 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', maxLength: 4096 })),
  // namespaces every key and channel, so deployments (or test runs) can share one Redis
  REDIS_PREFIX: Type.String({ default: 'gatehouse:', pattern: '^[A-Za-z0-9:_.-]{1,64}$' }),
  // ms between catch-up reads of new revocations when no Redis broadcasts them; 0 = never
  REVOCATION_POLL_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 60000 })),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  // processes sharing PORT (node:cluster); more than one needs nothing else on SQLite or PostgreSQL
  WORKERS: Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
  ACCESS_TOKEN_TTL: Type.String({ ...Duration, default: '15m' }),
  REFRESH_TOKEN_TTL: Type.String({ ...Duration, default: '7d' }),
  REFRESH_REUSE_INTERVAL: Type.String({ ...Duration, default: '10s' }),
  LOGIN_MAX_FAILURES: Type.Integer({ default: 5, minimum: 1 }),
  LOGIN_FAILURE_WINDOW: Type.String({ ...Duration, default: '15m' }),
  LOGIN_RATE_LIMIT: Type.String({ ...Rate, default: '60/m' }),
  REFRESH_RATE_LIMIT: Type.String({ ...Rate, default: '120/m' }),
  // off, a hop count, or a comma-separated list of proxy addresses/CIDRs; `true` (trust anyone) is refused
  TRUST_PROXY: Type.String({ default: 'false', pattern: '^(false|[0-9]+|[0-9a-fA-F:.,/ ]+)$', maxLength: 1024 }),
  REQUEST_TIMEOUT: Type.String({ ...Duration, default: '30s' }),
  // event-loop delay (ms) past which requests are shed with 503 + Retry-After; 0 turns shedding off
  MAX_EVENT_LOOP_DELAY: Type.Integer({ default: 1000, minimum: 0, maximum: 60000 }),
  ADMIN_EMAIL: Type.Optional(Type.String({ pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', maxLength: 254 })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
  VALIDATION_ERROR_DETAILS: Bool,
  DEFAULT_ROLES: Type.String({ ...RoleList, default: 'user' }),
  CORS_ORIGINS: Type.Optional(Type.String({ maxLength: 4096 })),
  BODY_LIMIT: Type.Integer({ default: 65536, minimum: 1024, maximum: 10485760 }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  LOG_REQUESTS: Bool,
  // OWASP's argon2id minimum: m=19 MiB, t=2, p=1. Tests lower these; it stays argon2id.
  ARGON2_MEMORY_COST: Type.Integer({ default: 19456, minimum: 8, maximum: 4194304 }),
  ARGON2_TIME_COST: Type.Integer({ default: 2, minimum: 1, maximum: 100 }),
  ARGON2_PARALLELISM: Type.Integer({ default: 1, minimum: 1, maximum: 16 }),
  // Bound on fast-jwt's cache of verified access tokens (entries never outlive their token's exp).
  TOKEN_CACHE_SIZE: Type.Integer({ default: 10000, minimum: 0, maximum: 1000000 }),
  // GET /metrics (Prometheus) is served only when enabled, and only to a bearer of METRICS_TOKEN
  METRICS_ENABLED: Bool,
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 1024 }))
})
type RawConfig = Static<typeof ConfigSchema>

export interface Config {
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
  loginMaxFailures: number
  loginFailureWindow: number
  loginRateLimit: { max: number, windowSeconds: number }
  refreshRateLimit: { max: number, windowSeconds: number }
  trustProxy: false | number | string
  requestTimeout: number
  maxEventLoopDelay: number
  admin: { email: string, password: string } | undefined
  validationErrorDetails: boolean
  defaultRoles: string[]
  corsOrigins: string[]
  bodyLimit: number
  logLevel: RawConfig['LOG_LEVEL']
  logRequests: boolean
  argon2: { memoryCost: number, timeCost: number, parallelism: number }
  tokenCacheSize: number
  metrics: { token: string } | undefined
}

export { ConfigError }

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** '15m' → 900. A bare number is seconds. */
export function parseDuration (value: string): number {
  const unit = value.at(-1) ?? ''
  const factor = UNIT_SECONDS[unit]
  return factor === undefined ? Number(value) : Number(value.slice(0, -1)) * factor
}

function parseRate (value: string): { max: number, windowSeconds: number } {
  const [count = '0', unit = 's'] = value.split('/')
  return { max: Number(count), windowSeconds: UNIT_SECONDS[unit] ?? 1 }
}

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
  return {
    env: raw.APP_ENV,
    production,
    jwtSecret: resolveSecret(raw.JWT_SECRET, production, dataDir),
    jwtIssuer: raw.JWT_ISSUER,
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
    loginRateLimit: parseRate(raw.LOGIN_RATE_LIMIT),
    refreshRateLimit: parseRate(raw.REFRESH_RATE_LIMIT),
    trustProxy: parseTrustProxy(raw.TRUST_PROXY),
    requestTimeout: parseDuration(raw.REQUEST_TIMEOUT),
    maxEventLoopDelay: raw.MAX_EVENT_LOOP_DELAY,
    admin: raw.ADMIN_EMAIL && raw.ADMIN_PASSWORD ? { email: raw.ADMIN_EMAIL, password: raw.ADMIN_PASSWORD } : undefined,
    validationErrorDetails: raw.VALIDATION_ERROR_DETAILS,
    defaultRoles: raw.DEFAULT_ROLES.split(','),
    corsOrigins: raw.CORS_ORIGINS ? raw.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean) : [],
    bodyLimit: raw.BODY_LIMIT,
    logLevel: raw.LOG_LEVEL,
    logRequests: raw.LOG_REQUESTS,
    argon2: { memoryCost: raw.ARGON2_MEMORY_COST, timeCost: raw.ARGON2_TIME_COST, parallelism: raw.ARGON2_PARALLELISM },
    tokenCacheSize: raw.TOKEN_CACHE_SIZE,
    metrics: metricsSettings(raw)
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
    loginFailureWindow: parseDuration(raw.LOGIN_FAILURE_WINDOW)
  }
  if (values.accessTtl < 1) throw new ConfigError('Invalid configuration: ACCESS_TOKEN_TTL must be at least 1s')
  if (values.refreshTtl <= values.accessTtl) throw new ConfigError('Invalid configuration: REFRESH_TOKEN_TTL must be longer than ACCESS_TOKEN_TTL')
  return values
}
