import { randomUUID } from 'node:crypto'
import { TokenExpired, TokenInvalid } from '../errors.js'
import type { TokenCodec } from './codec.js'
import { VerifiedTokenCache, type CacheLimits } from './verified-cache.js'
import type { AuthStrength, Claims, TokenType } from './claims.js'

/** Who a token speaks for: the user's identity and grants at signing time. */
export interface TokenSubject { id: string, email: string, roles: string[], isSuperuser: boolean }

export interface TokenLifetimes { issuer: string, accessTtl: number, refreshTtl: number }

/** What a new token says: for whom, in which session, which kind, from when, and how its session signed in. */
export interface TokenRequest { subject: TokenSubject, sessionId: string, type: TokenType, nowSeconds: number, strength: AuthStrength }

function isClaims (value: unknown): value is Claims {
  const c = value as Partial<Claims> | null
  return typeof c === 'object' && c !== null &&
    typeof c.user_id === 'string' && c.sub === c.user_id && typeof c.session_id === 'string' &&
    typeof c.email === 'string' && Array.isArray(c.roles) && typeof c.is_superuser === 'boolean' &&
    typeof c.exp === 'number' && typeof c.jti === 'string' && (c.type === 'access' || c.type === 'refresh')
}

/** An OpenID Connect client's token (docs/oidc.md#tokens-and-claims): never a credential of gatehouse's own routes. */
function isClientToken (value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'client_id' in value
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

  claims ({ subject, sessionId, type, nowSeconds, strength }: TokenRequest): Claims {
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
      auth_time: strength.authTime,
      ...(strength.idp !== undefined && { idp: strength.idp })
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
    if (!isClaims(payload) || payload.type !== type || isClientToken(payload)) throw new TokenInvalid()
    if (payload.exp * 1000 <= nowMs) throw new TokenExpired()
    this.cache.set(token, payload)
    return payload
  }

  /** An OpenID Connect client's refresh token: §3's claims and the client's; never cached, never passes `verify`. */
  verifyClientRefresh (token: string, nowMs: number): Claims & { client_id: string } {
    let payload: unknown
    try {
      payload = this.codec.verify(token, 'refresh', nowMs)
    } catch (err) {
      if ((err as { code?: string }).code === 'FAST_JWT_EXPIRED') throw new TokenExpired()
      throw new TokenInvalid()
    }
    if (!isClaims(payload) || payload.type !== 'refresh' || typeof (payload as { client_id?: unknown }).client_id !== 'string') throw new TokenInvalid()
    if (payload.exp * 1000 <= nowMs) throw new TokenExpired()
    return payload as Claims & { client_id: string }
  }
}
