import { randomUUID } from 'node:crypto'
import { TokenExpired, TokenInvalid } from './errors.js'
import type { TokenCodec } from './token-codec.js'
import { VerifiedTokenCache, type CacheLimits } from './token-cache.js'

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
  /** how the user signed in, RFC 8176 values: `["pwd"]`, or `["email"]` for an email code */
  amr: string[]
  /** when the user signed in, seconds since the epoch: a refresh keeps it */
  auth_time: number
}

/** How strongly a session's sign-in authenticated the user; every token of the session carries it. */
export interface AuthStrength { aal: string, amr: string[], authTime: number }

/** The sign-in methods a session can start with (RFC 8176 names). */
export type SignInMethod = 'pwd' | 'email'

/** The strength of a one-factor sign-in at `authTime` (seconds). A second factor would raise it to aal2. */
export function signInStrength (method: SignInMethod, authTime: number): AuthStrength {
  return { aal: 'aal1', amr: [method], authTime }
}

/** The strength of a sign-in finished with a second factor (TOTP or a recovery code) after `first`, at `authTime`. */
export function secondFactorStrength (first: string[], authTime: number): AuthStrength {
  return { aal: 'aal2', amr: [...first, 'otp', 'mfa'], authTime }
}

/** The strength a token carries; tokens signed before these claims existed were password sign-ins. */
export function strengthOf (claims: Partial<Claims>, signedInAt: number): AuthStrength {
  return {
    aal: typeof claims.aal === 'string' ? claims.aal : 'aal1',
    amr: Array.isArray(claims.amr) ? claims.amr : ['pwd'],
    authTime: typeof claims.auth_time === 'number' ? claims.auth_time : signedInAt
  }
}

/** Who a token speaks for: the user's identity and grants at signing time. */
export interface TokenSubject { id: string, email: string, roles: string[], isSuperuser: boolean }

export interface TokenLifetimes { issuer: string, accessTtl: number, refreshTtl: number }

function isClaims (value: unknown): value is Claims {
  const c = value as Partial<Claims> | null
  return typeof c === 'object' && c !== null &&
    typeof c.user_id === 'string' && c.sub === c.user_id && typeof c.session_id === 'string' &&
    typeof c.email === 'string' && Array.isArray(c.roles) && typeof c.is_superuser === 'boolean' &&
    typeof c.exp === 'number' && typeof c.jti === 'string' && (c.type === 'access' || c.type === 'refresh')
}

/** A bound on the bytes the cache may hold, far above what its entry count of real tokens needs. */
const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024

export class TokenIssuer {
  /** Tokens that verified, so a token presented again costs a Map lookup, not an HMAC. */
  readonly cache: VerifiedTokenCache

  constructor (
    private readonly codec: TokenCodec,
    private readonly lifetimes: TokenLifetimes,
    cacheLimits: Partial<CacheLimits> = {}
  ) {
    this.cache = new VerifiedTokenCache({ maxEntries: 10_000, maxBytes: DEFAULT_CACHE_BYTES, ...cacheLimits })
  }

  claims (subject: TokenSubject, sessionId: string, type: TokenType, nowSeconds: number, strength: AuthStrength): Claims {
    const ttl = type === 'access' ? this.lifetimes.accessTtl : this.lifetimes.refreshTtl
    return {
      user_id: subject.id,
      email: subject.email,
      roles: subject.roles,
      session_id: sessionId,
      is_superuser: subject.isSuperuser,
      type,
      sub: subject.id,
      iat: nowSeconds,
      exp: nowSeconds + ttl,
      iss: this.lifetimes.issuer,
      jti: randomUUID(),
      aal: strength.aal,
      amr: strength.amr,
      auth_time: strength.authTime
    }
  }

  sign (claims: Claims): string {
    return this.codec.sign(claims)
  }

  /**
   * RFC 8725 §3.11: the `type` claim keeps a refresh token from passing as an access token and
   * the reverse. fast-jwt accepts a token in the millisecond its exp is reached; docs/api.md#tokens-and-claims refuses
   * it from that second, hence the check here. Only a token that passed every check is cached.
   */
  verify (token: string, type: TokenType, nowMs: number): Claims {
    const cached = this.cache.get(token, nowMs)
    if (cached !== undefined) {
      if (cached.type !== type) throw new TokenInvalid()
      return cached
    }
    let payload: unknown
    try {
      payload = this.codec.verify(token, type, nowMs)
    } catch (err) {
      if ((err as { code?: string }).code === 'FAST_JWT_EXPIRED') throw new TokenExpired()
      throw new TokenInvalid()
    }
    if (!isClaims(payload) || payload.type !== type) throw new TokenInvalid()
    if (payload.exp * 1000 <= nowMs) throw new TokenExpired()
    this.cache.set(token, payload)
    return payload
  }
}
