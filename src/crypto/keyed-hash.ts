import { createHmac, hkdfSync } from 'node:crypto'

/**
 * HMAC-SHA256 under a key derived from JWT_SECRET with HKDF (RFC 5869, SHA-256, salt `gatehouse`)
 * for one use alone, named by `info`: a stored secret (a reset token, an email code, a recovery
 * code, a challenge) is kept only as its keyed hash, so a copy of the table alone cannot be
 * brute-forced offline, and the derived key never doubles as the token signing key.
 */
export class KeyedHash {
  private readonly key: Buffer

  /** `secret`: JWT_SECRET, or a data encryption key (recovery codes: a key that outlives a JWT_SECRET rotation) */
  constructor (secret: string | Buffer, info: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'gatehouse', info, 32))
  }

  /** base64url of the HMAC of `input` */
  of (input: string): string {
    return createHmac('sha256', this.key).update(input).digest('base64url')
  }

  /** the raw HMAC of `input`, for a constant-time comparison with a stored one */
  digest (input: string): Buffer {
    return createHmac('sha256', this.key).update(input).digest()
  }
}
