import { createHash, randomBytes } from 'node:crypto'
import type { DataKey } from '../crypto/envelope.js'
import { KeyedHash } from '../crypto/keyed-hash.js'

export type FlowSecretKind = 'interaction' | 'code'

/**
 * Interaction ids and authorization codes: 256 random bits, kept only as an HMAC-SHA-256 under a
 * key derived from a data encryption key for this purpose alone, that key's id beside the hash.
 * A lookup tries every configured key, so a rotation of DATA_ENCRYPTION_KEYS strands nothing.
 */
export class FlowSecrets {
  private readonly keys: Array<{ id: string, hash: KeyedHash }>

  constructor (dataKeys: DataKey[]) {
    if (dataKeys.length === 0) throw new Error('the OpenID Connect flow needs a data encryption key')
    this.keys = dataKeys.map(({ id, key }) => ({ id, hash: new KeyedHash(key, 'gatehouse oidc flow') }))
  }

  generate (): string {
    return randomBytes(32).toString('base64url')
  }

  /** The hash to store, under the first key. */
  hash (kind: FlowSecretKind, secret: string): { hash: string, keyId: string } {
    const [first] = this.keys as [{ id: string, hash: KeyedHash }]
    return { hash: first.hash.of(`${kind}\0${secret}`), keyId: first.id }
  }

  /** Every hash the secret may be stored under; none for a value that cannot be one of ours. */
  candidates (kind: FlowSecretKind, secret: string): string[] {
    if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return []
    return this.keys.map(({ hash }) => hash.of(`${kind}\0${secret}`))
  }
}

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256 (verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}
