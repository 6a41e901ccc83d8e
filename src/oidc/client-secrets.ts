import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { DataKey } from '../crypto/envelope.js'
import { KeyedHash } from '../crypto/keyed-hash.js'

export interface SecretHash { hash: string, keyId: string }

const SECRET_BYTES = 32
const PURPOSE = 'gatehouse oidc client secrets'

/**
 * Client secrets: 256 random bits, shown once and kept as an HMAC-SHA-256 under a key derived
 * from a data encryption key for this purpose alone, that key's id beside the hash; so a copy of
 * the table cannot be brute-forced offline and rotating JWT_SECRET voids no secret. Compared in
 * constant time; an unknown key id (a key retired from DATA_ENCRYPTION_KEYS) still spends one HMAC.
 */
export class ClientSecrets {
  private readonly keys: Map<string, KeyedHash>
  private readonly first: { id: string, hash: KeyedHash }

  constructor (dataKeys: DataKey[]) {
    const [first] = dataKeys
    if (first === undefined) throw new Error('client secrets need a data encryption key')
    this.keys = new Map(dataKeys.map(({ id, key }) => [id, new KeyedHash(key, PURPOSE)]))
    this.first = { id: first.id, hash: this.keys.get(first.id) as KeyedHash }
  }

  generate (): string {
    return randomBytes(SECRET_BYTES).toString('base64url')
  }

  hash (secret: string): SecretHash {
    return { hash: this.first.hash.of(secret), keyId: this.first.id }
  }

  /** `stored` undefined: the client has none (unknown client, public client), and the answer is false after the same work. */
  matches (presented: string, stored: SecretHash | undefined): boolean {
    const keyed = (stored === undefined ? undefined : this.keys.get(stored.keyId)) ?? this.first.hash
    const actual = Buffer.from(keyed.of(presented))
    const expected = Buffer.from(stored?.hash ?? 'x'.repeat(actual.length))
    return actual.length === expected.length && timingSafeEqual(actual, expected) && stored !== undefined && this.keys.has(stored.keyId)
  }
}
