import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import * as argon2 from 'argon2'
import type { ServiceEvents } from '../events.js'

export interface HashParameters { memoryCost: number, timeCost: number, parallelism: number }

/** argon2id on libuv's thread pool, so hashing never blocks the event loop. */
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

  /** An unknown email costs the same time as a wrong password, so the answer reveals no emails. */
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

  needsRehash (passwordHash: string): boolean {
    return argon2.needsRehash(passwordHash, this.options)
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
