import { pbkdf2, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import * as argon2 from 'argon2'
import type { ServiceEvents } from '../events.js'
import { parseHash, type ParsedHash } from './legacy-hashes.js'

export interface HashParameters { memoryCost: number, timeCost: number, parallelism: number }

const pbkdf2Async = promisify(pbkdf2)
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number, options: { N: number, r: number, p: number, maxmem: number }) => Promise<Buffer>

// the native bcrypt module is loaded at the first bcrypt hash, so a service without one stays smaller
let bcrypt: Promise<typeof import('bcrypt')> | undefined

/**
 * Every format on libuv's thread pool, never on the event loop: argon2 and bcrypt through their
 * native modules, scrypt and PBKDF2 through node:crypto's asynchronous functions.
 */
async function verifyParsed (hash: ParsedHash, password: string): Promise<boolean> {
  switch (hash.algorithm) {
    case 'argon2id': case 'argon2i': case 'argon2d':
      return await argon2.verify(hash.text, password)
    case 'bcrypt': {
      bcrypt ??= import('bcrypt')
      return await (await bcrypt).compare(password, hash.text)
    }
    case 'scrypt': {
      const { cost: N, blockSize: r, parallelization: p } = hash
      // OpenSSL's own count of the memory it needs (128·r·(N + p + 2)), the bounds keep it ≤ 256 MiB
      const derived = await scryptAsync(password, hash.salt, hash.key.length, { N, r, p, maxmem: 128 * r * (N + p + 2) + 65536 })
      return timingSafeEqual(derived, hash.key)
    }
    default: {
      const derived = await pbkdf2Async(password, hash.salt, hash.iterations, hash.key.length, hash.algorithm === 'pbkdf2_sha512' ? 'sha512' : 'sha256')
      return timingSafeEqual(derived, hash.key)
    }
  }
}

/** argon2id on libuv's thread pool, so hashing never blocks the event loop; imported formats verified likewise. */
export class PasswordHasher {
  private constructor (
    private readonly options: HashParameters & { type: typeof argon2.argon2id },
    private readonly dummyHash: string,
    private readonly events: ServiceEvents | undefined
  ) {}

  static create (parameters: HashParameters, events?: ServiceEvents): PasswordHasher {
    return new PasswordHasher({ ...parameters, type: argon2.argon2id }, dummyHash(parameters), events)
  }

  async hash (password: string): Promise<string> {
    const started = performance.now()
    try {
      return await argon2.hash(password, this.options)
    } finally {
      this.report('hash', started)
    }
  }

  /**
   * An unknown email (undefined), a user with no password ('') and a stored hash that is not a
   * supported format or is out of its bounds all cost one dummy argon2id verification and
   * answer false, the same as a wrong password: the answer reveals none of them.
   */
  async verify (passwordHash: string | undefined, password: string): Promise<boolean> {
    const started = performance.now()
    try {
      const check = passwordHash === undefined || passwordHash === '' ? undefined : parseHash(passwordHash)
      if (check?.ok !== true) {
        await argon2.verify(this.dummyHash, password)
        return false
      }
      return await verifyParsed(check.hash, password)
    } catch {
      return false
    } finally {
      this.report('verify', started)
    }
  }

  /** Anything but argon2id with today's parameters is rehashed after the next successful check; '' has nothing to rehash. */
  needsRehash (passwordHash: string): boolean {
    if (passwordHash === '') return false
    const check = parseHash(passwordHash)
    if (!check.ok) return false
    return check.hash.algorithm !== 'argon2id' || argon2.needsRehash(passwordHash, this.options)
  }

  private report (operation: 'hash' | 'verify', started: number): void {
    this.events?.emit('password', { operation, seconds: (performance.now() - started) / 1000 })
  }
}

/**
 * Costs what a real hash costs and matches no password. Not hashed at start, which keeps the
 * process smaller (docs/benchmarks.md).
 */
export function dummyHash ({ memoryCost, timeCost, parallelism }: HashParameters): string {
  // the PHC string format: standard base64 without padding
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64').replace(/=+$/, '')
  return `$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$${b64(16)}$${b64(32)}`
}
