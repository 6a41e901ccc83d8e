import { randomUUID } from 'node:crypto'
import type { User } from '../db/users.js'
import { TokenExpired, TokenInvalid } from '../errors.js'
import type { KeyRing } from '../keys/key-ring.js'
import type { AuthStrength } from '../tokens/claims.js'
import { VerifiedTokenCache } from '../tokens/verified-cache.js'

/** ID tokens live five minutes: a relying party reads one once, at sign-in or at a refresh. */
export const ID_TOKEN_TTL = 300

/** The claims of an RFC 9068 access token gatehouse issues to a client (docs/oidc.md#tokens-and-claims). */
export interface OidcAccessClaims {
  iss: string
  sub: string
  aud: string
  client_id: string
  scope: string
  exp: number
  iat: number
  jti: string
  /** a user's token: its child session and how the user signed in */
  session_id?: string
  auth_time?: number
  acr?: string
  amr?: string[]
  roles?: string[]
  /** client_credentials: the client acting for itself */
  kind?: 'client'
}

export interface UserGrant {
  user: User
  clientId: string
  scopes: string[]
  strength: AuthStrength
  /** the portal session (sid) and the child session (session_id) */
  portalSessionId: string
  childSessionId: string
  accessTtl: number
  nonce?: string | null | undefined
  nowSeconds: number
}

/** What the scopes email, profile and roles grant (userClaims). */
export type UserClaims = { email?: string, email_verified?: boolean, name?: string, roles?: string[] }

export interface MachineGrant { clientId: string, roles: string[], scopes: string[], accessTtl: number, nowSeconds: number }

interface Header { kid?: unknown, typ?: unknown }

const MAX_HEADER_CHARS = 512

function headerOf (token: string): Header {
  const dot = token.indexOf('.')
  if (dot <= 0 || dot > MAX_HEADER_CHARS) throw new TokenInvalid()
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as unknown
    if (typeof header !== 'object' || header === null) throw new TokenInvalid()
    return header as Header
  } catch {
    throw new TokenInvalid()
  }
}

/**
 * ID tokens and RFC 9068 access tokens, signed by the current key of JWT_ALG (the keys of the
 * JWKS, so relying parties verify them offline), and their verification: by kid among the held
 * keys, the algorithm and the issuer pinned.
 */
export class OidcTokens {
  /**
   * Access tokens whose signature passed, as §3's tokens are kept (src/tokens/verified-cache.ts):
   * userinfo is a token check and one read, and an ES256 verification per request would be most of
   * its cost. Revocation, the client and the scope are still checked on every request by the caller;
   * a revoked signing key empties it (src/services.ts).
   */
  readonly verified = new VerifiedTokenCache<OidcAccessClaims>({ maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 })

  /** Whether this exact token passed verifyAccess before (its expiry is still checked there). */
  readonly knows = (token: string): boolean => this.verified.has(token)

  constructor (private readonly ring: KeyRing, private readonly issuer: string, private readonly audience: string | undefined) {}

  idToken (grant: UserGrant, withNonce: boolean): string {
    const { user, clientId, scopes, strength, nowSeconds: now } = grant
    const claims = userClaims(user, scopes, {
      iss: this.issuer,
      sub: user.id,
      aud: clientId,
      azp: clientId,
      exp: now + ID_TOKEN_TTL,
      iat: now,
      auth_time: strength.authTime,
      ...(withNonce && grant.nonce != null && { nonce: grant.nonce }),
      acr: strength.aal,
      amr: strength.amr,
      sid: grant.portalSessionId
    })
    return this.sign(claims, 'JWT')
  }

  accessToken (grant: UserGrant): { token: string, claims: OidcAccessClaims } {
    const { user, clientId, scopes, strength, nowSeconds: now } = grant
    const claims: OidcAccessClaims = {
      iss: this.issuer,
      sub: user.id,
      aud: clientId,
      client_id: clientId,
      scope: scopes.join(' '),
      exp: now + grant.accessTtl,
      iat: now,
      jti: randomUUID(),
      auth_time: strength.authTime,
      acr: strength.aal,
      amr: strength.amr,
      session_id: grant.childSessionId,
      ...(scopes.includes('roles') && { roles: user.roles })
    }
    return { token: this.sign(claims as unknown as Record<string, unknown>, 'at+jwt'), claims }
  }

  /** §17's client_credentials token: the client itself, for services that verify through the JWKS. */
  clientToken ({ clientId, roles, scopes, accessTtl, nowSeconds: now }: MachineGrant): { token: string, claims: OidcAccessClaims } {
    const claims: OidcAccessClaims = {
      iss: this.issuer,
      sub: clientId,
      aud: this.audience ?? clientId,
      client_id: clientId,
      scope: scopes.join(' '),
      exp: now + accessTtl,
      iat: now,
      jti: randomUUID(),
      roles,
      kind: 'client'
    }
    return { token: this.sign(claims as unknown as Record<string, unknown>, 'at+jwt'), claims }
  }

  /** An access token issued to a client (typ at+jwt, with client_id); throws TokenInvalid or TokenExpired. */
  verifyAccess (token: string, nowMs: number): OidcAccessClaims {
    const cached = this.verified.get(token, nowMs)
    if (cached !== undefined) return cached
    const header = headerOf(token)
    if (header.typ !== 'at+jwt') throw new TokenInvalid()
    const payload = this.verify(token, header, false) as Partial<OidcAccessClaims>
    if (typeof payload.client_id !== 'string' || typeof payload.scope !== 'string' || typeof payload.exp !== 'number') throw new TokenInvalid()
    if (payload.exp * 1000 <= nowMs) throw new TokenExpired()
    this.verified.set(token, payload as OidcAccessClaims)
    return payload as OidcAccessClaims
  }

  /** Any token a key of the ring signed, expired or not (an ID token hint); undefined when it is not one. */
  verifySigned (token: string, expired: boolean): Record<string, unknown> | undefined {
    try {
      return this.verify(token, headerOf(token), expired) as Record<string, unknown>
    } catch {
      return undefined
    }
  }

  private verify (token: string, header: Header, expired: boolean): unknown {
    const key = typeof header.kid === 'string' ? this.ring.verifiable(header.kid, Date.now()) : undefined
    if (key === undefined) throw new TokenInvalid()
    let payload: unknown
    try {
      payload = key.verifyAny(token, expired)
    } catch (err) {
      if ((err as { code?: string }).code === 'FAST_JWT_EXPIRED') throw new TokenExpired()
      throw new TokenInvalid()
    }
    if ((payload as { iss?: unknown }).iss !== this.issuer) throw new TokenInvalid()
    return payload
  }

  private sign (claims: Record<string, unknown>, typ: string): string {
    const key = this.ring.current(Date.now())
    if (key === undefined) throw new Error('no signing key is current')
    return key.signAs(claims, typ)
  }
}

/** The claims each scope grants, in ID tokens and at userinfo: added to `into` (no copy per request at userinfo). */
export function userClaims<T extends object> (user: User, scopes: string[], into: T): T & UserClaims {
  const claims: T & UserClaims = into
  if (scopes.includes('email')) {
    claims.email = user.email
    claims.email_verified = user.emailVerified
  }
  if (scopes.includes('profile')) claims.name = user.name
  if (scopes.includes('roles')) claims.roles = user.roles
  return claims
}
