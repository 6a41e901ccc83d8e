import { Type, type Static } from '@sinclair/typebox'
import { ref, Timestamp } from './common.js'

/** A kid as gatehouse makes them (16 base64url characters); anything up to 64 is looked up. */
export const Kid = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', maxLength: 64 })

export const KidParams = Type.Object({ kid: Kid }, { additionalProperties: false })
export type KidParams = Static<typeof KidParams>

const B64 = Type.String({ maxLength: 1024 })

/** One public key of the JWKS (RFC 7517): never a private member. */
export const Jwk = Type.Object({
  kid: Type.String({ maxLength: 64 }),
  kty: Type.Union([Type.Literal('EC'), Type.Literal('OKP'), Type.Literal('RSA')]),
  alg: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA'), Type.Literal('RS256')]),
  use: Type.Literal('sig'),
  crv: Type.Optional(Type.String({ maxLength: 16 })),
  x: Type.Optional(B64),
  y: Type.Optional(B64),
  n: Type.Optional(B64),
  e: Type.Optional(B64)
}, { $id: 'Jwk', additionalProperties: false, description: 'A public signing key: EC (crv, x, y), OKP (crv, x) or RSA (n, e)' })

export const JwkSet = Type.Object({
  keys: Type.Array(ref(Jwk), { maxItems: 64 })
}, { $id: 'JwkSet', description: 'The next, current and previous public keys of access tokens; empty under HS256' })
export type JwkSet = Static<typeof JwkSet>

export const SigningKey = Type.Object({
  kid: Type.String({ maxLength: 64 }),
  alg: Type.String({ maxLength: 16 }),
  state: Type.Union(['next', 'current', 'previous', 'revoked'].map((s) => Type.Literal(s))),
  created_at: Timestamp,
  activates_at: Type.Union([Timestamp, Type.Null()]),
  retires_at: Type.Union([Timestamp, Type.Null()])
}, {
  $id: 'SigningKey',
  description: 'A signing key and its times; activates_at: when it signs (null for the standby, a next key that signs once a ' +
    'revocation of the current key promotes it); retires_at: when it is gone (null while it has no successor)'
})
export type SigningKey = Static<typeof SigningKey>

export const SigningKeyList = Type.Object({
  data: Type.Array(ref(SigningKey), { maxItems: 1000 })
}, { $id: 'SigningKeyList', description: 'The signing keys not yet gone, oldest first' })
