import { Type, type Static } from '@sinclair/typebox'
import { dataKeys, type KeysConfig } from './keys.js'
import { ConfigError } from '../errors.js'
import { durationSetting, parseDuration } from './units.js'

/*
 * The settings of TOTP two-factor sign-in: their own module, spread into ConfigSchema
 * (src/config/config.ts). Off by default; while off, enable-2fa and verify-2fa answer 501 as reserved paths.
 */

export const TotpConfigSchema = {
  ENABLE_TOTP: Type.Boolean({
    default: false,
    description: '`true` enables TOTP two-factor sign-in: `POST /auth/enable-2fa`, `/auth/verify-2fa`, `/auth/recovery-codes`, ' +
      '`/auth/disable-2fa` and `DELETE /api/users/:id/2fa`. The secrets are sealed with `DATA_ENCRYPTION_KEYS` (required in production)'
  }),
  TOTP_ISSUER: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[^:]+$',
    default: 'gatehouse',
    description: 'the issuer an authenticator app shows beside the account (the `issuer` of the otpauth URI); no colon'
  }),
  SECOND_FACTOR_MAX_FAILURES: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description: 'wrong second-factor codes (sign-in challenge, enrolment, `disable-2fa`, `recovery-codes`, `reset-password`) for one account ' +
      'within `SECOND_FACTOR_FAILURE_WINDOW`, from every address together, after which six-digit codes get 429 until the window passes ' +
      '(a recovery code still works) and the user is told by mail'
  }),
  SECOND_FACTOR_FAILURE_WINDOW: durationSetting('the window of `SECOND_FACTOR_MAX_FAILURES` (it starts at the first failure)', '1d')
}

type TotpRaw = Static<ReturnType<typeof Type.Object<typeof TotpConfigSchema>>> & { DATA_ENCRYPTION_KEYS?: string | undefined }

export interface TotpConfig {
  /**
   * ENABLE_TOTP: the issuer shown by authenticator apps, and the per-account bound on wrong codes
   * (failures, window in seconds); undefined when off
   */
  totp: { issuer: string, maxFailures: number, failureWindow: number } | undefined
}

/**
 * The TOTP settings. Secrets must be sealed, so TOTP needs data encryption keys: production
 * refuses to start without DATA_ENCRYPTION_KEYS, development generates one once into DATA_DIR.
 */
export function totpSettings (raw: TotpRaw, keys: KeysConfig, production: boolean, dataDir: string): TotpConfig & Pick<KeysConfig, 'dataEncryptionKeys'> {
  if (!raw.ENABLE_TOTP) return { totp: undefined, dataEncryptionKeys: keys.dataEncryptionKeys }
  if (keys.dataEncryptionKeys === undefined && production) {
    throw new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ENABLE_TOTP=true')
  }
  return {
    totp: { issuer: raw.TOTP_ISSUER, maxFailures: raw.SECOND_FACTOR_MAX_FAILURES, failureWindow: windowOf(raw.SECOND_FACTOR_FAILURE_WINDOW) },
    dataEncryptionKeys: keys.dataEncryptionKeys ?? dataKeys(undefined, 'ENABLE_TOTP=true', production, dataDir)
  }
}

function windowOf (value: string): number {
  const seconds = parseDuration(value)
  if (seconds < 1) throw new ConfigError('Invalid configuration: SECOND_FACTOR_FAILURE_WINDOW must be at least 1s')
  return seconds
}
