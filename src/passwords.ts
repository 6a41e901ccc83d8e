import { performance } from 'node:perf_hooks'
import * as argon2 from 'argon2'
import type { ServiceEvents } from './services/events.js'

export interface HashParameters { memoryCost: number, timeCost: number, parallelism: number }

/**
 * argon2id on libuv's thread pool, so hashing never blocks the event loop (OWASP Password
 * Storage Cheat Sheet). Construct with `create`, which prepares the dummy hash. Each hash and
 * verify is reported with its duration as a `password` event, so every caller is measured.
 */
export class PasswordHasher {
  private constructor (
    private readonly options: HashParameters & { type: typeof argon2.argon2id },
    private readonly dummyHash: string,
    private readonly events: ServiceEvents | undefined
  ) {}

  static async create (parameters: HashParameters, events?: ServiceEvents): Promise<PasswordHasher> {
    const options = { ...parameters, type: argon2.argon2id }
    return new PasswordHasher(options, await argon2.hash('gatehouse-dummy-password', options), events)
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
