import * as argon2 from 'argon2'
import bcrypt from 'bcrypt'
import { percentile } from './stats.js'

/**
 * The login ceilings: raw argon2id verify throughput in a process of its own, at the server's
 * default parameters and with the same libuv thread pool. Forked by run.ts; each message
 * `{ seconds, concurrency }` runs that many concurrent verify loops for that long and answers
 * with the count and latencies. It exits when the parent goes away. `kind: 'bcrypt'` loops raw
 * bcrypt.compare over a cost-10 hash instead (the ceiling of a sign-in with an imported bcrypt
 * hash), `'bcrypt-rehash'` bcrypt.compare then argon2id at the defaults (what a first sign-in
 * with one must do at the least: verify, then rehash).
 */
export interface VerifyRun { seconds: number, concurrency: number, kind?: 'argon2' | 'bcrypt' | 'bcrypt-rehash' }
export interface VerifyResult { ops: number, failures: number, elapsedMs: number, p50: number, p99: number }

// OWASP's minimum, the server's defaults (src/config/config.ts)
const PARAMETERS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 }
const PASSWORD = 'bench-Password-1!'

const hash = await argon2.hash(PASSWORD, PARAMETERS)
const bcryptHash = await bcrypt.hash(PASSWORD, 10)

const OPERATIONS: Record<NonNullable<VerifyRun['kind']>, () => Promise<boolean>> = {
  argon2: async () => await argon2.verify(hash, PASSWORD),
  bcrypt: async () => await bcrypt.compare(PASSWORD, bcryptHash),
  'bcrypt-rehash': async () => await bcrypt.compare(PASSWORD, bcryptHash) && (await argon2.hash(PASSWORD, PARAMETERS)).length > 0
}

async function run ({ seconds, concurrency, kind = 'argon2' }: VerifyRun): Promise<VerifyResult> {
  const operation = OPERATIONS[kind]
  const latencies: number[] = []
  let failures = 0
  const start = performance.now()
  const deadline = start + seconds * 1000
  async function loop (): Promise<void> {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      if (!await operation()) failures++
      latencies.push(performance.now() - t0)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  const elapsedMs = performance.now() - start
  latencies.sort((a, b) => a - b)
  return { ops: latencies.length, failures, elapsedMs, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

process.on('message', (message: VerifyRun) => {
  run(message).then((result) => process.send?.(result), (err: unknown) => {
    process.stderr.write(`argon2 worker: ${String(err)}\n`)
    process.exit(1)
  })
})
process.on('disconnect', () => process.exit(0))
process.send?.({ ready: true })
