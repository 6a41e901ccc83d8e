import { createSigner, createVerifier } from 'fast-jwt'

/** Signs and verifies compact JWS; verify throws on a bad signature, algorithm, issuer or exp. */
export interface TokenCodec {
  sign (claims: { type: string }): string
  verify (token: string): unknown
}

/** The claims every token must carry for a verification to succeed. */
const REQUIRED_CLAIMS = ['exp', 'iat', 'iss', 'jti', 'sub', 'type', 'session_id', 'user_id']

/**
 * RFC 9068's media type for access tokens: a verifier elsewhere that pins it refuses a refresh
 * token (same key and issuer) where an access token belongs. gatehouse itself tells the two apart
 * by the `type` claim and does not require the header, so tokens signed before it still verify.
 */
export const ACCESS_TOKEN_TYP = 'at+jwt'

/**
 * fast-jwt with RFC 8725's pins: HS256 only (fast-jwt accepts every algorithm the key allows
 * unless told), the issuer and the claims we rely on required. No cache here: fast-jwt's would
 * also keep failures, keyed by whatever an attacker sends; TokenIssuer caches successes itself.
 * @see https://github.com/nearform/fast-jwt
 */
export function createTokenCodec (secret: string, issuer: string): TokenCodec {
  const signAccess = createSigner({ key: secret, algorithm: 'HS256', header: { alg: 'HS256', typ: ACCESS_TOKEN_TYP } })
  const signOther = createSigner({ key: secret, algorithm: 'HS256' })
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: issuer, requiredClaims: REQUIRED_CLAIMS })
  return {
    sign: (claims) => claims.type === 'access' ? signAccess(claims as Record<string, unknown>) : signOther(claims as Record<string, unknown>),
    verify: (token) => verify(token) as unknown
  }
}
