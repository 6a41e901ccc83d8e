import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { isLocalHost } from '../portal/return-url.js'
import { hostName } from './portal.js'

/*
 * The settings of passkeys (WebAuthn, docs/passkeys.md): their own module, spread into ConfigSchema
 * (src/config/config.ts). Off by default; while off, no passkey route exists.
 */

export const PasskeySettings = {
  ENABLE_PASSKEYS: Type.Boolean({
    default: false,
    description: '`true` enables passkeys: `/auth/passkeys/*`, `/api/auth/passkeys`, the admin routes and the portal\'s passkey steps ' +
      '(docs/passkeys.md). Needs `PUBLIC_URL`; in production also `DATA_ENCRYPTION_KEYS`'
  }),
  WEBAUTHN_RP_ID: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 253,
    examples: ['example.com'],
    description: 'the relying party ID passkeys are bound to: `PUBLIC_URL`\'s host (the default) or a parent domain of it, so a ' +
      'portal on `auth.example.com` can register passkeys for `example.com`. Changing it later makes every passkey unusable'
  })),
  WEBAUTHN_RP_NAME: Type.String({ default: 'gatehouse', minLength: 1, maxLength: 64, description: 'the name authenticators show beside the account' }),
  WEBAUTHN_ORIGINS: Type.Optional(Type.String({
    maxLength: 4096,
    examples: ['https://auth.example.com,https://app.example.com'],
    description: 'comma-separated exact origins a ceremony may come from (the `origin` of `clientDataJSON`), each on the RP ID or ' +
      'under it, on https (http only for localhost names outside production). Unset: the origin of `PUBLIC_URL`'
  })),
  WEBAUTHN_USER_VERIFICATION: Type.Union([Type.Literal('required'), Type.Literal('preferred')], {
    default: 'required',
    description: '`required`: every ceremony must verify the user (PIN or biometric), refused otherwise; `preferred` accepts a ' +
      'passkey without it, as one factor'
  }),
  PASSKEY_SATISFIES_MFA: Type.Boolean({
    default: true,
    description: 'a user-verified passkey sign-in is `aal2` and asks no second factor; `false`: a TOTP user still gets `mfa_required`'
  }),
  PASSKEYS_MAX_PER_USER: Type.Integer({ default: 10, minimum: 1, maximum: 100, description: 'passkeys one user may hold; beyond: 409 `too_many_passkeys`' })
}

type PasskeyRaw = Static<ReturnType<typeof Type.Object<typeof PasskeySettings>>>

export interface PasskeyConfig {
  /** ENABLE_PASSKEYS; undefined when off */
  passkeys: {
    rpId: string
    rpName: string
    /** the exact origins `clientDataJSON` may name */
    origins: string[]
    userVerification: 'required' | 'preferred'
    satisfiesMfa: boolean
    maxPerUser: number
  } | undefined
}

function refuse (message: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${message}`)
}

function onRpId (host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`)
}

function rpIdOf (value: string | undefined, publicHost: string): string {
  if (value === undefined) return publicHost
  const rpId = hostName(value)
  // one label only for localhost itself: a bare top-level name would let any site under it claim the passkeys
  if (rpId === undefined || (!rpId.includes('.') && rpId !== 'localhost')) throw refuse('WEBAUTHN_RP_ID must be a host name (example.com)')
  if (!onRpId(publicHost, rpId)) throw refuse(`WEBAUTHN_RP_ID must be PUBLIC_URL's host ${publicHost} or a parent domain of it`)
  return rpId
}

function originOf (value: string, rpId: string, production: boolean): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw refuse(`WEBAUTHN_ORIGINS lists origins (https://host[:port]): ${JSON.stringify(value)} is not one`)
  }
  // an origin exactly as browsers serialise it: no path, query, fragment or credentials, lower case
  if (url.origin !== value.replace(/\/$/, '') || url.pathname !== '/') throw refuse(`WEBAUTHN_ORIGINS lists origins (https://host[:port]): ${JSON.stringify(value)} is not one`)
  if (!onRpId(url.hostname, rpId)) throw refuse(`WEBAUTHN_ORIGINS: ${url.origin} is not on WEBAUTHN_RP_ID ${rpId} or under it`)
  if (url.protocol !== 'https:' && (production || url.protocol !== 'http:' || !isLocalHost(url.hostname))) {
    throw refuse(`WEBAUTHN_ORIGINS: ${url.origin} must be https (http only for localhost names outside production)`)
  }
  return url.origin
}

/** The passkey settings; every origin and the RP ID are checked against PUBLIC_URL here, once. */
export function passkeySettings (raw: PasskeyRaw & { PUBLIC_URL?: string | undefined }, production: boolean): PasskeyConfig {
  if (!raw.ENABLE_PASSKEYS) return { passkeys: undefined }
  if (raw.PUBLIC_URL === undefined) throw refuse('ENABLE_PASSKEYS=true needs PUBLIC_URL')
  const publicUrl = new URL(raw.PUBLIC_URL)
  const rpId = rpIdOf(raw.WEBAUTHN_RP_ID, publicUrl.hostname.replace(/\.$/, ''))
  const listed = (raw.WEBAUTHN_ORIGINS ?? publicUrl.origin).split(',').map((o) => o.trim()).filter((o) => o !== '')
  if (listed.length === 0) throw refuse('WEBAUTHN_ORIGINS lists at least one origin')
  return {
    passkeys: {
      rpId,
      rpName: raw.WEBAUTHN_RP_NAME,
      origins: [...new Set(listed.map((o) => originOf(o, rpId, production)))],
      userVerification: raw.WEBAUTHN_USER_VERIFICATION,
      satisfiesMfa: raw.PASSKEY_SATISFIES_MFA,
      maxPerUser: raw.PASSKEYS_MAX_PER_USER
    }
  }
}
