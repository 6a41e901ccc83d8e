import { createSigner, createVerifier } from 'fast-jwt'
import type { KeyRing } from '../keys/key-ring.js'

export type CodecTokenType = 'access' | 'refresh'

/** Signs and verifies compact JWS; verify throws on a bad signature, algorithm, key, issuer, audience or exp. */
export interface TokenCodec {
  sign (claims: { type: string }): string
  verify (token: string, type: CodecTokenType, nowMs: number): unknown
}

export const REQUIRED_CLAIMS = ['exp', 'iat', 'iss', 'jti', 'sub', 'type', 'session_id', 'user_id']

/** A verifier that pins RFC 9068's type refuses a refresh token; gatehouse checks the `type` claim instead. */
export const ACCESS_TOKEN_TYP = 'at+jwt'

/** gatehouse's own header holds alg, typ and a 16-character kid. */
const MAX_HEADER_CHARS = 256
const MAX_KID_CHARS = 64

export interface CodecOptions {
  audience?: string | undefined
  ring?: KeyRing | undefined
}

/**
 * RFC 8725's pins: one algorithm per verifier, issuer and claims required; keys chosen by `kid`
 * among those held, never fetched from a token (`jku`, `x5u`, `jwk`). No fast-jwt cache: it would
 * keep failures, keyed by whatever an attacker sends.
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

function kidOf (token: string): string {
  const dot = token.indexOf('.')
  if (dot <= 0 || dot > MAX_HEADER_CHARS) throw new Error('malformed header')
  const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { kid?: unknown } | null
  const kid = header?.kid
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_CHARS) throw new Error('missing or oversized kid')
  return kid
}
