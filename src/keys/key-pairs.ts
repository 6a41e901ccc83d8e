import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto'
import { promisify } from 'node:util'
import type { AsymmetricAlgorithm } from '../config/keys.js'

/** A published public key: the members a verifier needs and never a private one. */
export interface PublicJwk {
  kid: string
  kty: 'EC' | 'OKP' | 'RSA'
  alg: AsymmetricAlgorithm
  use: 'sig'
  crv?: string
  x?: string
  y?: string
  n?: string
  e?: string
}

export interface GeneratedPair { kid: string, publicJwk: PublicJwk, privateDer: Buffer }

/** A kid of 16 characters: random, so it says nothing about the key or when it was made. */
export function newKid (): string {
  return randomBytes(12).toString('base64url')
}

const generateAsync = promisify(generateKeyPair)

/** Off the event loop: a 2048-bit RSA pair takes long enough to stall every request meanwhile. */
async function generate (alg: AsymmetricAlgorithm): Promise<{ publicKey: KeyObject, privateKey: KeyObject }> {
  if (alg === 'ES256') return await generateAsync('ec', { namedCurve: 'P-256' })
  if (alg === 'EdDSA') return await generateAsync('ed25519', undefined)
  return await generateAsync('rsa', { modulusLength: 2048 })
}

/** A fresh key pair of `alg` (node:crypto): the public half as a JWK, the private half as PKCS#8 DER. */
export async function generatePair (alg: AsymmetricAlgorithm): Promise<GeneratedPair> {
  const kid = newKid()
  const { publicKey, privateKey } = await generate(alg)
  const { kty, crv, x, y, n, e } = publicKey.export({ format: 'jwk' }) as { kty: PublicJwk['kty'], crv?: string, x?: string, y?: string, n?: string, e?: string }
  const publicJwk: PublicJwk = { kid, kty, alg, use: 'sig', ...(crv !== undefined && { crv }), ...(x !== undefined && { x }), ...(y !== undefined && { y }), ...(n !== undefined && { n }), ...(e !== undefined && { e }) }
  return { kid, publicJwk, privateDer: privateKey.export({ format: 'der', type: 'pkcs8' }) }
}

/** PEM of both halves, as fast-jwt takes them. */
export function pemOf (publicJwk: PublicJwk, privateDer: Buffer): { publicPem: string, privatePem: string } {
  const publicPem = createPublicKey({ key: publicJwk as unknown as JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString()
  const privatePem = createPrivateKey({ key: privateDer, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString()
  return { publicPem, privatePem }
}
