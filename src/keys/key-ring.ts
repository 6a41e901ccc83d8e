import { createSigner, createVerifier } from 'fast-jwt'
import type { AsymmetricAlgorithm } from '../config/keys.js'
import type { PublicJwk } from './key-pairs.js'
import { currentKey } from './key-states.js'

/** A key the ring holds: its signer and verifier are built once, when it is first loaded. */
export interface RingKey {
  kid: string
  seq: number
  activatesAt: string
  revokedAt: null
  activatesMs: number
  /** Infinity while it has no successor */
  retiresMs: number
  jwk: PublicJwk
  sign (claims: Record<string, unknown>): string
  verify (token: string): unknown
  /** an OpenID Connect token (ID token `JWT`, RFC 9068 `at+jwt`): its claims name their own audience */
  signAs (claims: Record<string, unknown>, typ: string): string
  /** any token this key signed: the algorithm pinned; the issuer and audience are the caller's to check; `expired` accepts one past its exp */
  verifyAny (token: string, expired?: boolean): unknown
}

export interface RingKeyMaterial { kid: string, seq: number, activatesAt: string, retiresAt: string | null, jwk: PublicJwk, publicPem: string, privatePem: string }

export interface VerifyPins { issuer: string, audience: string | undefined, requiredClaims: string[], typ: string }

/**
 * The live keys of this instance (not revoked, not gone), held for the token codec: a kid is
 * one Map lookup, each key's algorithm is pinned in its own verifier, and the signing key is
 * decided from the stored times at the moment of signing. Filled by the key service from the
 * database at start and whenever any instance changes a key.
 */
export class KeyRing {
  private byKid = new Map<string, RingKey>()
  private keys: RingKey[] = []

  constructor (readonly alg: AsymmetricAlgorithm, private readonly pins: VerifyPins) {}

  /** Replaces the keys; those already held keep their signer and verifier. */
  set (materials: RingKeyMaterial[]): void {
    const next = new Map<string, RingKey>()
    for (const m of materials) {
      const held = this.byKid.get(m.kid)
      const key = held ?? this.build(m)
      key.activatesAt = m.activatesAt
      key.activatesMs = Date.parse(m.activatesAt)
      key.retiresMs = m.retiresAt === null ? Infinity : Date.parse(m.retiresAt)
      next.set(m.kid, key)
    }
    this.byKid = next
    this.keys = [...next.values()]
  }

  has (kid: string): boolean {
    return this.byKid.has(kid)
  }

  /** A revoked key stops verifying here at once, before the reload that confirms it. */
  drop (kid: string): void {
    if (!this.byKid.delete(kid)) return
    this.keys = this.keys.filter((k) => k.kid !== kid)
  }

  current (nowMs: number): RingKey | undefined {
    return currentKey(this.keys, nowMs)
  }

  /** The key a token names, while it may verify: known, and not past its retirement. */
  verifiable (kid: string, nowMs: number): RingKey | undefined {
    const key = this.byKid.get(kid)
    return key !== undefined && key.retiresMs > nowMs ? key : undefined
  }

  /** next, current and previous public keys (the JWKS). */
  published (nowMs: number): PublicJwk[] {
    return this.keys.filter((k) => k.retiresMs > nowMs).map((k) => k.jwk)
  }

  private build (m: RingKeyMaterial): RingKey {
    const { issuer, audience, requiredClaims, typ } = this.pins
    const signer = createSigner({ key: m.privatePem, algorithm: this.alg, kid: m.kid, header: { alg: this.alg, typ }, ...(audience !== undefined && { aud: audience }) })
    const verifier = createVerifier({
      key: m.publicPem,
      algorithms: [this.alg],
      allowedIss: issuer,
      ...(audience !== undefined && { allowedAud: audience }),
      requiredClaims: audience !== undefined ? [...requiredClaims, 'aud'] : requiredClaims
    })
    const signers = new Map<string, (payload: Record<string, unknown>) => string>()
    const loose = { key: m.publicPem, algorithms: [this.alg], requiredClaims: ['exp', 'iat', 'iss', 'sub'] }
    const verifyAny = createVerifier(loose)
    const verifyExpired = createVerifier({ ...loose, ignoreExpiration: true })
    const signerFor = (typ: string) => {
      const held = signers.get(typ)
      if (held !== undefined) return held
      const signer = createSigner({ key: m.privatePem, algorithm: this.alg, kid: m.kid, header: { alg: this.alg, typ } })
      signers.set(typ, signer)
      return signer
    }
    return {
      signAs: (claims, typ) => signerFor(typ)(claims),
      verifyAny: (token, expired = false) => (expired ? verifyExpired : verifyAny)(token) as unknown,
      kid: m.kid,
      seq: m.seq,
      activatesAt: m.activatesAt,
      revokedAt: null,
      activatesMs: 0,
      retiresMs: Infinity,
      jwk: m.jwk,
      sign: (claims) => signer(claims),
      verify: (token) => verifier(token) as unknown
    }
  }
}
