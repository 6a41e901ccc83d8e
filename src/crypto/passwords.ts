import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import * as argon2 from 'argon2'
import type { ServiceEvents } from '../events.js'

export interface HashParameters { memoryCost: number, timeCost: number, parallelism: number }

/**
 * argon2id on libuv's thread pool, so hashing never blocks the event loop (OWASP Password
 * Storage Cheat Sheet). Construct with `create`, which makes the dummy hash. Each hash and
 * verify is reported with its duration as a `password` event, so every caller is measured.
 */
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
   * Verifies against the dummy hash when there is no user, so an unknown email costs the same
   * time as a wrong password and the answer cannot reveal which emails exist.
   */
  async verify (passwordHash: string | undefined, password: string): Promise<boolean> {
    const started = performance.now()
    try {
      const ok = await argon2.verify(passwordHash ?? this.dummyHash, password)
      return ok && passwordHash !== undefined
    } catch {
      return false
    } finally {
      this.report('verify', started)
    }
  }

  /** True when the hash was made with other parameters than today's: re-hash it at login. */
  needsRehash (passwordHash: string): boolean {
    return argon2.needsRehash(passwordHash, this.options)
  }

  private report (operation: 'hash' | 'verify', started: number): void {
    this.events?.emit('password', { operation, seconds: (performance.now() - started) / 1000 })
  }
}

/**
 * What an unknown email is verified against: today's parameters around a random salt and a
 * random digest. Verifying it runs the whole argon2id computation, so it costs what a real hash
 * costs, and no password matches it. It is not hashed at start: glibc hands the 19 MiB of the
 * first hash back to the system but keeps those of later ones in its arenas, so a start that
 * hashes once (the admin bootstrap) instead of twice ends about 20 MB smaller.
 */
export function dummyHash ({ memoryCost, timeCost, parallelism }: HashParameters): string {
  // the PHC string format: standard base64 without padding
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64').replace(/=+$/, '')
  return `$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$${b64(16)}$${b64(32)}`
}
