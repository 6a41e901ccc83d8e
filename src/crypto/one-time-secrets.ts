import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto'
import { KeyedHash } from './keyed-hash.js'

/** What a one-time secret is for; a secret is good for its own purpose only. */
export type SecretPurpose = 'reset' | 'login' | 'verify_email'

/**
 * Reset tokens and email codes are stored only as keyed hashes (src/crypto/keyed-hash.ts, info
 * `gatehouse one-time secrets`): six digits would take a moment to brute-force without the key.
 */
export class SecretHasher {
  private readonly hash: KeyedHash

  constructor (jwtSecret: string) {
    this.hash = new KeyedHash(jwtSecret, 'gatehouse one-time secrets')
  }

  /** A reset token's hash: the token alone finds its row. */
  resetHash (token: string): string {
    return this.mac(`reset\0${token}`)
  }

  /** An email code's hash, bound to its user and purpose: the same six digits differ per user and purpose. */
  codeHash (userId: string, purpose: SecretPurpose, code: string): string {
    return this.mac(`${purpose}\0${userId}\0${code}`)
  }

  private mac (input: string): string {
    return this.hash.of(input)
  }
}

/** At least 256 random bits, base64url: 43 characters, safe in a URL fragment or query. */
export function newResetToken (): string {
  return randomBytes(32).toString('base64url')
}

/** Six digits, uniformly drawn (randomInt has no modulo bias), leading zeros kept. */
export function newEmailCode (): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

/** Compares two hashes in constant time. */
export function sameHash (a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
