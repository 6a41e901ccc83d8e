import { createSigner, createVerifier } from 'fast-jwt'

/** Signs and verifies compact JWS; verify throws on a bad signature, algorithm, issuer or exp. */
export interface TokenCodec {
  sign (claims: object): string
  verify (token: string): unknown
}

/** The claims every token must carry for a verification to succeed. */
const REQUIRED_CLAIMS = ['exp', 'iat', 'iss', 'jti', 'sub', 'type', 'session_id', 'user_id']

/**
 * fast-jwt with RFC 8725's pins: HS256 only (fast-jwt accepts every algorithm the key allows
 * unless told), the issuer and the claims we rely on required. No cache here: fast-jwt's would
 * also keep failures, keyed by whatever an attacker sends; TokenIssuer caches successes itself.
 * @see https://github.com/nearform/fast-jwt
 */
export function createTokenCodec (secret: string, issuer: string): TokenCodec {
  const sign = createSigner({ key: secret, algorithm: 'HS256' })
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: issuer, requiredClaims: REQUIRED_CLAIMS })
  return { sign: (claims) => sign(claims as Record<string, unknown>), verify: (token) => verify(token) as unknown }
}
