import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { generateDataKeyEntry, parseDataKeys, type DataKey } from '../crypto/envelope.js'
import { durationSetting as duration, parseDuration } from './units.js'
import { notice } from './notices.js'
import { readOrGenerateSecret } from './secret-file.js'

export const JWT_ALGORITHMS = ['HS256', 'ES256', 'EdDSA', 'RS256'] as const
export type JwtAlgorithm = typeof JWT_ALGORITHMS[number]
export type AsymmetricAlgorithm = Exclude<JwtAlgorithm, 'HS256'>

export const KeysConfigSchema = {
  JWT_ALG: Type.Union(JWT_ALGORITHMS.map((a) => Type.Literal(a)), {
    default: 'HS256',
    description: 'algorithm of access tokens: `HS256` (`JWT_SECRET`), or `ES256`, `EdDSA` (Ed25519), `RS256` (2048-bit) with key ' +
      'pairs gatehouse generates, keeps in the database and publishes at `/.well-known/jwks.json`. Refresh tokens stay HS256'
  }),
  JWT_AUDIENCE: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 256,
    examples: ['https://api.example.com'],
    description: 'when set, access tokens carry `aud` = this value and gatehouse requires exactly it; refresh tokens carry none'
  })),
  DATA_ENCRYPTION_KEYS: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: '`id:base64key[,id:base64key…]` of 32-byte keys (`openssl rand -base64 32`): the first encrypts, all decrypt ' +
      'private signing keys at rest (AES-256-GCM). Required in production with an asymmetric `JWT_ALG`; unset in development, ' +
      'generated once into `DATA_DIR/data-encryption-keys` (mode 0600) when needed'
  })),
  JWKS_MAX_AGE: duration('`Cache-Control: max-age` of `/.well-known/jwks.json`: how long a verifier may keep the published keys', '10m'),
  JWT_KEY_PUBLISH_LEAD: Type.Optional(duration('how long a new signing key is published before it signs, so verifiers caching the ' +
    'key set already hold it; at least `30s` (jose refetches an unknown key at most every 30 s); unset: twice `JWKS_MAX_AGE`, at least `30s`')),
  JWT_KEY_ROTATION_INTERVAL: Type.Optional(duration('rotate the signing key automatically this often (e.g. `90d`), longer than ' +
    '`JWT_KEY_PUBLISH_LEAD`; unset: only on request'))
}

/**
 * jose refetches an unknown kid at most every 30 s, so a key published for less may sign tokens a
 * jose verifier refuses (docs/keys.md#rotation-and-the-verifiers-caches).
 */
export const MIN_PUBLISH_LEAD = 30

type KeysRaw = Static<ReturnType<typeof Type.Object<typeof KeysConfigSchema>>>

export interface KeysConfig {
  jwtAlg: JwtAlgorithm
  jwtAudience: string | undefined
  dataEncryptionKeys: DataKey[] | undefined
  /** seconds */
  jwksMaxAge: number
  jwtKeyPublishLead: number
  jwtKeyRotationInterval: number | undefined
}

/**
 * `featureNeedingKeys`: the first enabled feature that seals or keyed-hashes with the data keys
 * (`ENABLE_PORTAL=true`, …: src/config/config.ts), named when production has none; an asymmetric
 * JWT_ALG needs them too.
 */
export function keysSettings (raw: KeysRaw, production: boolean, dataDir: string, featureNeedingKeys: string | false = false): KeysConfig {
  const jwksMaxAge = parseDuration(raw.JWKS_MAX_AGE)
  const jwtKeyPublishLead = raw.JWT_KEY_PUBLISH_LEAD === undefined ? Math.max(2 * jwksMaxAge, MIN_PUBLISH_LEAD) : parseDuration(raw.JWT_KEY_PUBLISH_LEAD)
  if (jwtKeyPublishLead < MIN_PUBLISH_LEAD) {
    throw new ConfigError(`Invalid configuration: JWT_KEY_PUBLISH_LEAD must be at least ${MIN_PUBLISH_LEAD}s: jose's remote key set fetches an unknown key at most every 30 s, so tokens of a key published for less are refused (docs/keys.md)`)
  }
  const interval = raw.JWT_KEY_ROTATION_INTERVAL === undefined ? undefined : parseDuration(raw.JWT_KEY_ROTATION_INTERVAL)
  if (interval !== undefined && interval <= jwtKeyPublishLead) {
    throw new ConfigError('Invalid configuration: JWT_KEY_ROTATION_INTERVAL must be longer than JWT_KEY_PUBLISH_LEAD')
  }
  const asymmetric = raw.JWT_ALG !== 'HS256'
  return {
    jwtAlg: raw.JWT_ALG,
    jwtAudience: raw.JWT_AUDIENCE,
    dataEncryptionKeys: dataKeys(raw.DATA_ENCRYPTION_KEYS, asymmetric ? 'JWT_ALG is not HS256' : featureNeedingKeys, production, dataDir),
    jwksMaxAge,
    jwtKeyPublishLead,
    jwtKeyRotationInterval: interval
  }
}

/** `neededBy`: the setting that needs the keys (named when production has none), or false. */
export function dataKeys (value: string | undefined, neededBy: string | false, production: boolean, dataDir: string): DataKey[] | undefined {
  if (value !== undefined) return parseDataKeys(value)
  if (neededBy === false) return undefined
  if (production) throw new ConfigError(`Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ${neededBy}`)
  const { value: entry, created, file } = readOrGenerateSecret(dataDir, 'data-encryption-keys', 'development data encryption key file', () => generateDataKeyEntry())
  if (created) notice(`DATA_ENCRYPTION_KEYS is not set: generated a development key in ${file}. Set DATA_ENCRYPTION_KEYS in production.`)
  return parseDataKeys(entry, `DATA_ENCRYPTION_KEYS (from ${file})`)
}
