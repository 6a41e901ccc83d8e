import { Type, type Static, type TObject } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { resolveSecret } from './jwt-secret.js'
import { durationSetting, parseDuration } from './units.js'

const duration = (value: string, description: string) => durationSetting(description, value)

/** The settings of tokens and the sessions they belong to, spread into the one ConfigSchema (src/config/config.ts). */
export const TokenSettings = {
  JWT_SECRET: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'the HS256 signing key: at least 32 bytes, and in production at least 8 distinct characters and an ' +
      'estimated 128 bits of entropy, so nothing patterned or made of words (`openssl rand -base64 32`). Unset in development: a key is generated once into `DATA_DIR/jwt-secret` ' +
      '(mode 0600, exactly the key), with a warning; unset in production: the server refuses to start'
  })),
  JWT_ISSUER: Type.String({ default: 'gatehouse', minLength: 1, maxLength: 256, description: 'the `iss` claim signed and required' }),
  ACCESS_TOKEN_TTL: duration('15m', 'lifetime of an access token'),
  REFRESH_TOKEN_TTL: duration('7d', 'lifetime of a refresh token; longer than `ACCESS_TOKEN_TTL`'),
  REFRESH_REUSE_INTERVAL: duration('10s', 'grace interval in which the refresh token just spent may be presented again (two tabs racing)'),
  SESSION_MAX_AGE: duration('30d', 'absolute lifetime of a session: refreshes extend it up to this age from sign-in, never beyond (no token of it expires later); at least `ACCESS_TOKEN_TTL`'),
  TOKEN_CACHE_SIZE: Type.Integer({
    default: 10000,
    minimum: 0,
    maximum: 1000000,
    description: 'bound of the verified-token cache, whose entries never outlive their token\'s `exp`; `0` disables it'
  })
}

export interface TokenConfig {
  jwtSecret: string
  jwtIssuer: string
  /** seconds, as every lifetime below */
  accessTtl: number
  refreshTtl: number
  refreshReuseInterval: number
  sessionMaxAge: number
  tokenCacheSize: number
}

export function tokenConfig (raw: Static<TObject<typeof TokenSettings>>, production: boolean, dataDir: string): TokenConfig {
  const accessTtl = parseDuration(raw.ACCESS_TOKEN_TTL)
  const refreshTtl = parseDuration(raw.REFRESH_TOKEN_TTL)
  const sessionMaxAge = parseDuration(raw.SESSION_MAX_AGE)
  if (accessTtl < 1) throw new ConfigError('Invalid configuration: ACCESS_TOKEN_TTL must be at least 1s')
  if (refreshTtl <= accessTtl) throw new ConfigError('Invalid configuration: REFRESH_TOKEN_TTL must be longer than ACCESS_TOKEN_TTL')
  if (sessionMaxAge < accessTtl) throw new ConfigError('Invalid configuration: SESSION_MAX_AGE must be at least ACCESS_TOKEN_TTL')
  return {
    jwtSecret: resolveSecret(raw.JWT_SECRET, production, dataDir),
    jwtIssuer: raw.JWT_ISSUER,
    accessTtl,
    refreshTtl,
    refreshReuseInterval: parseDuration(raw.REFRESH_REUSE_INTERVAL),
    sessionMaxAge,
    tokenCacheSize: raw.TOKEN_CACHE_SIZE
  }
}
