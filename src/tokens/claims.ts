export type TokenType = 'access' | 'refresh'

/** The claims of both tokens (docs/api.md#tokens-and-claims). */
export interface Claims {
  user_id: string
  email: string
  roles: string[]
  session_id: string
  is_superuser: boolean
  type: TokenType
  sub: string
  iat: number
  exp: number
  iss: string
  jti: string
  /** authentication assurance level (NIST SP 800-63B): `aal1` for one factor */
  aal: string
  /** how the user signed in, RFC 8176 values: `["pwd"]`, `["email"]` for an email code, `["pop"]` for a passkey */
  amr: string[]
  /** when the user signed in, seconds since the epoch: a refresh keeps it */
  auth_time: number
  /** the identity provider the session signed in through (its id in IDP_PROVIDERS_FILE), with `amr` `["ext"]` */
  idp?: string
  /** set on an API key's claims only (docs/api-keys.md#using-a-key): never in a signed token */
  kind?: 'api_key'
  /** the API key's id (also its `session_id`) */
  key_id?: string
}

/** How strongly a session's sign-in authenticated the user; every token of the session carries it. */
export interface AuthStrength { aal: string, amr: string[], authTime: number, idp?: string | undefined }

/**
 * The sign-in methods a session can start with (RFC 8176 names): `pop` is a passkey (proof of
 * possession), `ext` an external identity provider (docs/identity-providers.md).
 */
export type SignInMethod = 'pwd' | 'email' | 'pop' | 'ext'

/** What a second factor proves: a TOTP or recovery code (`otp`), or a passkey (`pop`). */
export type SecondFactor = 'otp' | 'pop'

/** The strength of a one-factor sign-in at `authTime` (seconds). A second factor would raise it to aal2. */
export function signInStrength (method: SignInMethod, authTime: number): AuthStrength {
  return { aal: 'aal1', amr: [method], authTime }
}

/**
 * The strength of a sign-in finished with a second factor after `first`, at `authTime`. A
 * user-verified passkey alone is both (`["pop","mfa"]`): the device, and the PIN or biometric that unlocked it.
 */
export function secondFactorStrength (first: string[], authTime: number, factor: SecondFactor = 'otp'): AuthStrength {
  return { aal: 'aal2', amr: [...first, ...(first.includes(factor) ? [] : [factor]), 'mfa'], authTime }
}

/**
 * A sign-in through identity provider `idp`: one factor, unless the provider is trusted to have
 * asked for a second one (`satisfies_mfa`) and says it did (its `amr` contains `mfa`).
 */
export function externalStrength (idp: string, upstreamMfa: boolean, authTime: number): AuthStrength {
  return upstreamMfa ? { aal: 'aal2', amr: ['ext', 'mfa'], authTime, idp } : { aal: 'aal1', amr: ['ext'], authTime, idp }
}

/** The strength a token carries; tokens signed before these claims existed were password sign-ins. */
export function strengthOf (claims: Partial<Claims>, signedInAt: number): AuthStrength {
  return {
    aal: typeof claims.aal === 'string' ? claims.aal : 'aal1',
    amr: Array.isArray(claims.amr) ? claims.amr : ['pwd'],
    authTime: typeof claims.auth_time === 'number' ? claims.auth_time : signedInAt,
    ...(typeof claims.idp === 'string' && { idp: claims.idp })
  }
}
