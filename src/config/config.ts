import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { accountConfig, AccountSettings, type AccountConfig } from './accounts.js'
import { apiKeySettings, ApiKeySettings, type ApiKeyConfig } from './api-keys.js'
import { authzConfig, AuthzSettings, type AuthzConfig } from './authz.js'
import { breachedPasswordsConfig, BreachedPasswordsSettings, type BreachedPasswordsConfig } from './breached-passwords.js'
import { idpSettings, IdpSettings, type IdpConfig } from './idp.js'
import { KeysConfigSchema, keysSettings, type KeysConfig } from './keys.js'
import { limitConfig, LimitSettings, type LimitConfig } from './limits.js'
import { mailSettings, MailSettingsSchema, type MailConfig } from './mail.js'
import { passkeySettings, PasskeySettings, type PasskeyConfig } from './passkeys.js'
import { oidcSettings, OidcSettings, type OidcConfig } from './oidc.js'
import { observabilityConfig, ObservabilitySettings, type ObservabilityConfig } from './observability.js'
import { portalSettings, PortalSettings, type PortalConfig } from './portal.js'
import { RecoveryConfigSchema, recoverySettings, type RecoveryConfig } from './recovery.js'
import { serverConfig, ServerSettings, type ServerConfig } from './server.js'
import { sessionsConfig, SessionsSettings, type SessionsConfig } from './sessions.js'
import { storageConfig, StorageSettings, type StorageConfig } from './storage.js'
import { tokenConfig, TokenSettings, type TokenConfig } from './tokens.js'
import { TotpConfigSchema, totpSettings, type TotpConfig } from './totp.js'

/**
 * Every setting, each with the description that docs/operations.md and .env.example are generated
 * from (`npm run docs:config`). Each area declares its settings in its own module, beside the
 * function that reads them (typed by the settings' Static type) into its part of the Config.
 */
export const ConfigSchema = Type.Object({
  APP_ENV: Type.Union([Type.Literal('development'), Type.Literal('production')], {
    default: 'development',
    description: '`production` requires a strong `JWT_SECRET` and sets `Secure` on cookies and HSTS on answers'
  }),
  ...TokenSettings,
  ...SessionsSettings,
  ...KeysConfigSchema,
  ...StorageSettings,
  ...ServerSettings,
  ...LimitSettings,
  ...AccountSettings,
  ...ObservabilitySettings,
  ...MailSettingsSchema,
  ...RecoveryConfigSchema,
  ...AuthzSettings,
  ...TotpConfigSchema,
  ...PortalSettings,
  ...PasskeySettings,
  ...BreachedPasswordsSettings,
  ...ApiKeySettings,
  ...OidcSettings,
  ...IdpSettings
})
type RawConfig = Static<typeof ConfigSchema>

export interface Config extends TokenConfig, KeysConfig, StorageConfig, ServerConfig, LimitConfig, AccountConfig,
  ObservabilityConfig, RecoveryConfig, AuthzConfig, TotpConfig, SessionsConfig, PortalConfig, PasskeyConfig, BreachedPasswordsConfig, ApiKeyConfig, OidcConfig,
  IdpConfig {
  env: RawConfig['APP_ENV']
  production: boolean
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

/**
 * env-schema's Ajv keeps a compiled validator per schema object: one copy (env-schema marks it
 * `additionalProperties: false`, so never ConfigSchema itself) compiles once per process, where a
 * fresh copy per load cost some 60 ms of compiling every time.
 */
const VALIDATED_SCHEMA = structuredClone(ConfigSchema)

/** Reads and validates the settings; a bad value throws a ConfigError naming the variable. */
export function loadConfig ({ values = {}, fromEnvironment = true }: LoadOptions = {}): Config {
  let raw: RawConfig
  try {
    raw = envSchema<RawConfig>({
      schema: VALIDATED_SCHEMA,
      data: values,
      env: fromEnvironment,
      dotenv: fromEnvironment
    })
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message.replaceAll('env/', '')}`)
  }
  const production = raw.APP_ENV === 'production'
  const storage = storageConfig(raw)
  const accounts = accountConfig(raw)
  const portal = portalSettings(raw, production)
  const passkeys = passkeySettings(raw, production)
  const keys = keysSettings(raw, production, storage.dataDir, featureNeedingKeys(raw))
  return {
    env: raw.APP_ENV,
    production,
    ...storage,
    ...accounts,
    ...keys,
    ...tokenConfig(raw, production, storage.dataDir),
    ...totpSettings(raw, keys, production, storage.dataDir),
    ...serverConfig(raw),
    ...limitConfig(raw),
    ...observabilityConfig(raw),
    mail: mailSettings(raw, production),
    // the portal's reset page is the default reset link
    ...recoverySettings({ ...raw, PASSWORD_RESET_URL: raw.PASSWORD_RESET_URL ?? (portal.portal && `${portal.portal.publicUrl}/portal/reset#token={token}`) }, production),
    ...authzConfig(raw),
    ...sessionsConfig(raw),
    ...portal,
    ...passkeys,
    ...breachedPasswordsConfig(raw),
    ...apiKeySettings(raw),
    ...oidcSettings(raw),
    ...idpSettings(raw, production)
  }
}

/** The first enabled feature that seals or keyed-hashes with DATA_ENCRYPTION_KEYS: production without them names it. */
function featureNeedingKeys (raw: RawConfig): string | false {
  const needing = [
    ['ENABLE_PORTAL', raw.ENABLE_PORTAL],
    ['ENABLE_PASSKEYS', raw.ENABLE_PASSKEYS],
    ['ENABLE_API_KEYS', raw.ENABLE_API_KEYS],
    ['ENABLE_OIDC_PROVIDER', raw.ENABLE_OIDC_PROVIDER]
  ] as const
  const first = needing.find(([, on]) => on)
  return first === undefined ? false : `${first[0]}=true`
}
