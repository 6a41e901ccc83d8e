import { createSigner, createVerifier } from 'fast-jwt'
import type { KeyRing } from '../keys/key-ring.js'

export type CodecTokenType = 'access' | 'refresh'

/** Signs and verifies compact JWS; verify throws on a bad signature, algorithm, key, issuer, audience or exp. */
export interface TokenCodec {
  sign (claims: { type: string }): string
  verify (token: string, type: CodecTokenType, nowMs: number): unknown
}

/** The claims every token must carry for a verification to succeed. */
export const REQUIRED_CLAIMS = ['exp', 'iat', 'iss', 'jti', 'sub', 'type', 'session_id', 'user_id']

/**
 * RFC 9068's media type for access tokens: a verifier elsewhere that pins it refuses a refresh
 * token (same key and issuer) where an access token belongs. gatehouse itself tells the two apart
 * by the `type` claim and does not require the header, so tokens signed before it still verify.
 */
export const ACCESS_TOKEN_TYP = 'at+jwt'

/** A protected header longer than this is not one gatehouse signed (it holds alg, typ and a 16-character kid). */
const MAX_HEADER_CHARS = 256
const MAX_KID_CHARS = 64

export interface CodecOptions {
  /** JWT_AUDIENCE: signed into access tokens and required of them */
  audience?: string | undefined
  /** the asymmetric keys of access tokens (JWT_ALG other than HS256); HS256 under JWT_SECRET without */
  ring?: KeyRing | undefined
}

/**
 * fast-jwt with RFC 8725's pins: one algorithm per verifier (fast-jwt accepts every algorithm the
 * key allows unless told), the issuer and the claims we rely on required. Refresh tokens are always
 * HS256 under JWT_SECRET; access tokens too unless a key ring is given, whose keys are chosen by
 * `kid` among the keys gatehouse holds — never fetched from anything a token names (`jku`, `x5u`,
 * `jwk` are not read). No cache here: fast-jwt's would also keep failures, keyed by whatever an
 * attacker sends; TokenIssuer caches successes itself.
 * @see https://github.com/nearform/fast-jwt
 */
export function createTokenCodec (secret: string, issuer: string, { audience, ring }: CodecOptions = {}): TokenCodec {
  const withAudience = audience === undefined ? {} : { aud: audience }
  const signAccess = createSigner({ key: secret, algorithm: 'HS256', header: { alg: 'HS256', typ: ACCESS_TOKEN_TYP }, ...withAudience })
  const signRefresh = createSigner({ key: secret, algorithm: 'HS256' })
  const verifyRefresh = createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: issuer, requiredClaims: REQUIRED_CLAIMS })
  const verifyAccess = audience === undefined
    ? verifyRefresh
    : createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: issuer, allowedAud: audience, requiredClaims: [...REQUIRED_CLAIMS, 'aud'] })
  if (ring === undefined) {
    return {
      sign: (claims) => claims.type === 'access' ? signAccess(claims as Record<string, unknown>) : signRefresh(claims as Record<string, unknown>),
      verify: (token, type) => (type === 'access' ? verifyAccess(token) : verifyRefresh(token)) as unknown
    }
  }
  return {
    sign (claims) {
      if (claims.type !== 'access') return signRefresh(claims as Record<string, unknown>)
      const key = ring.current(Date.now())
      if (key === undefined) throw new Error('no signing key is current')
      return key.sign(claims as Record<string, unknown>)
    },
    verify (token, type, nowMs) {
      if (type !== 'access') return verifyRefresh(token) as unknown
      const key = ring.verifiable(kidOf(token), nowMs)
      if (key === undefined) throw new Error('unknown, revoked or retired kid')
      return key.verify(token)
    }
  }
}

/** The `kid` of a token's protected header, read with bounded work; a token without one is refused. */
function kidOf (token: string): string {
  const dot = token.indexOf('.')
  if (dot <= 0 || dot > MAX_HEADER_CHARS) throw new Error('malformed header')
  const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { kid?: unknown } | null
  const kid = header?.kid
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_CHARS) throw new Error('missing or oversized kid')
  return kid
}
