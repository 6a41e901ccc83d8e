import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { durationSetting, parseDuration, parseRate } from './units.js'

/*
 * The settings of machine credentials (API keys and service accounts, docs/api-keys.md): their own
 * module, spread into ConfigSchema (src/config/config.ts). Off by default; while off, no route of
 * theirs exists and a `gh_…` Bearer is just an invalid token.
 */

export const ApiKeySettings = {
  ENABLE_API_KEYS: Type.Boolean({
    default: false,
    description: '`true` enables API keys as Bearer credentials on `/api/*` and `/auth/verify`, their routes and service accounts ' +
      '(docs/api-keys.md). Keys are stored as keyed hashes under `DATA_ENCRYPTION_KEYS` (required in production)'
  }),
  API_KEY_MAX_TTL: durationSetting('the longest lifetime a key may have, and the lifetime of a key created without `expires_at`', '90d'),
  API_KEYS_MAX_PER_USER: Type.Integer({
    default: 50,
    minimum: 1,
    maximum: 1000,
    description: 'live (neither revoked nor expired) keys one user may hold; beyond: 409 `too_many_api_keys`'
  }),
  API_KEY_RATE_LIMIT: Type.Optional(Type.String({
    pattern: '^[0-9]+/[smh]$',
    maxLength: 16,
    examples: ['600/m'],
    description: 'requests per key, counted across instances with `REDIS_URL`; beyond: 429 `rate_limited` with `Retry-After` ' +
      '(never 401). Written `<count>/<s|m|h>`; unset: no limit'
  }))
}

type ApiKeyRaw = Static<ReturnType<typeof Type.Object<typeof ApiKeySettings>>>

export interface ApiKeyConfig {
  /** ENABLE_API_KEYS; undefined when off */
  apiKeys: {
    /** seconds */
    maxTtl: number
    maxPerUser: number
    /** per key; undefined: no limit */
    rateLimit: { max: number, windowSeconds: number } | undefined
  } | undefined
}

export function apiKeySettings (raw: ApiKeyRaw): ApiKeyConfig {
  if (!raw.ENABLE_API_KEYS) return { apiKeys: undefined }
  const maxTtl = parseDuration(raw.API_KEY_MAX_TTL)
  if (maxTtl < 60) throw new ConfigError('Invalid configuration: API_KEY_MAX_TTL must be at least 60s')
  const rateLimit = raw.API_KEY_RATE_LIMIT === undefined ? undefined : parseRate(raw.API_KEY_RATE_LIMIT)
  if (rateLimit !== undefined && rateLimit.max < 1) throw new ConfigError('Invalid configuration: API_KEY_RATE_LIMIT must allow at least one request')
  return { apiKeys: { maxTtl, maxPerUser: raw.API_KEYS_MAX_PER_USER, rateLimit } }
}
