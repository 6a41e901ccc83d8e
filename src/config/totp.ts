import { Type, type Static } from '@sinclair/typebox'
import { dataKeys, type KeysConfig } from './keys.js'
import { ConfigError } from '../errors.js'

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
  })
}

type TotpRaw = Static<ReturnType<typeof Type.Object<typeof TotpConfigSchema>>> & { DATA_ENCRYPTION_KEYS?: string | undefined }

export interface TotpConfig {
  /** ENABLE_TOTP: the issuer shown by authenticator apps; undefined when off */
  totp: { issuer: string } | undefined
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
    totp: { issuer: raw.TOTP_ISSUER },
    dataEncryptionKeys: keys.dataEncryptionKeys ?? dataKeys(undefined, true, production, dataDir)
  }
}
