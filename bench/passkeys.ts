import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { SoftAuthenticator } from '../test/webauthn-authenticator.js'
import { signIn } from './client.js'
import { ADMIN, BenchError, startBenchServer, startGatehouse, stopAll, type Child } from './servers.js'
import { cpuSeconds } from './proc.js'
import { median } from './stats.js'

/*
 * `npm run bench:passkeys`: POST /auth/passkeys/login/verify against its ceiling, the same
 * verification by @simplewebauthn/server alone in a bare Fastify route (bench/passkey-ceiling.ts),
 * at the same concurrency, and the floor between them (the same script with the SQLite rows SPEC
 * §14 requires of any sign-in: what no implementation keeping those rules can go under; docs/benchmarks.md
 * "Passkey sign-in"). A challenge is good once, so every request needs an assertion of its
 * own: before each run the bench asks the server for `requests` challenges (login/options) and
 * signs one assertion per challenge with the software authenticator of the tests
 * (test/webauthn-authenticator.ts); autocannon then sends each body once (`amount`), in order.
 * The authenticator keeps its sign count at 0 (as synced passkeys do), so the order in which
 * concurrent requests arrive does not matter. Each server first answers `warmup` sign-ins that are
 * not counted (the first thousand requests of a process run mostly unoptimized code). Only the
 * login/verify run is measured: the CPU is read around it, not around the options calls before it.
 * Options (key=value or BENCH_*):
 *   requests=2000 connections=20 rounds=3 users=200 warmup=1000; BENCH_CPU_PROFILE=<dir> profiles gatehouse
 */

const RP_ID = 'auth.bench.example'
const ORIGIN = `https://${RP_ID}`

interface Sample { rps: number, p50: number, p99: number, cpuUs: number }

function option (name: string, fallback: number, least = 1): number {
  const raw = process.argv.find((a) => a.startsWith(`${name}=`))?.split('=')[1] ?? process.env[`BENCH_${name.toUpperCase()}`]
  const value = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(value) || value < least) throw new BenchError(`${name} must be a whole number ≥ ${least}`)
  return value
}

async function call (child: Child, path: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }
  const res = await fetch(child.url + path, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) })
  const json = await res.json() as Record<string, unknown>
  if (res.status >= 300) throw new BenchError(`${child.name} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** One passkey on the server, held by a fresh authenticator. */
async function enrol (child: Child, prefix: string, token?: string): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator(ORIGIN, {}, false)
  const { challenge_id: challengeId, options } = await call(child, `${prefix}/register/options`, {}, token) as { challenge_id: string, options: never }
  await call(child, `${prefix}/register/verify`, { challenge_id: challengeId, credential: authenticator.create(options) }, token)
  return authenticator
}

/**
 * gatehouse's users, each with a passkey: sign-ins spread over them as in a real deployment. A
 * sign-in also bounds its user's sessions by SESSIONS_MAX_PER_USER (100): reading whether the user
 * is over it costs more the more sessions the user holds, and a user over it has the oldest revoked.
 * With the default 200 users a run of 3 × 2000 sign-ins leaves each about 35, under the bound, as
 * most users are; `users=40` takes each past it in the third round. Made by the seeded admin, four at
 * a time (each costs two argon2 hashes); each signs in once with the password.
 */
async function enrolUsers (child: Child, count: number): Promise<SoftAuthenticator[]> {
  const admin = await signIn(child, ADMIN)
  const out: SoftAuthenticator[] = []
  const one = async (i: number): Promise<SoftAuthenticator> => {
    const user = { email: `bench-passkey-${i}@example.com`, password: 'Bench-Passkey-Password-1!', name: 'Bench Passkey' }
    await call(child, '/api/users', user, admin.token)
    return await enrol(child, '/auth/passkeys', (await signIn(child, user)).token)
  }
  for (let i = 0; i < count; i += 4) out.push(...await Promise.all(Array.from({ length: Math.min(4, count - i) }, async (_, j) => await one(i + j))))
  return out
}

/** `count` request bodies, each an assertion over a challenge of its own (fetched 20 at a time), by the authenticators in turn. */
async function bodies (child: Child, prefix: string, authenticators: SoftAuthenticator[], count: number): Promise<string[]> {
  const out: string[] = []
  while (out.length < count) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, count - out.length) }, async () =>
      await call(child, `${prefix}/login/options`, {}) as { challenge_id: string, options: never }))
    for (const { challenge_id: challengeId, options } of batch) {
      const authenticator = authenticators[out.length % authenticators.length] as SoftAuthenticator
      out.push(JSON.stringify({ challenge_id: challengeId, credential: authenticator.get(options) }))
    }
  }
  return out
}

/**
 * The rate is timed from the start to the last response: autocannon notices that `amount` is done
 * only at its next one-second tick, so its own `duration` rounds every run up to whole seconds.
 */
async function measure (child: Child, path: string, prepared: string[], connections: number): Promise<Sample> {
  let next = 0
  const cpuBefore = cpuSeconds(child.pid)
  const started = performance.now()
  let last = started
  const run = autocannon({
    url: child.url,
    connections,
    amount: prepared.length,
    requests: [{ method: 'POST', path, headers: { 'content-type': 'application/json' }, setupRequest: (request) => ({ ...request, body: prepared[next++] }) }]
  })
  run.on('response', () => { last = performance.now() })
  const result = await run
  const cpuUs = (cpuSeconds(child.pid) - cpuBefore) / prepared.length * 1e6
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new BenchError(`${child.name}: ${bad} of ${prepared.length} requests failed`)
  return { rps: prepared.length / ((last - started) / 1000), p50: result.latency.p50, p99: result.latency.p99, cpuUs }
}

const fmt = (n: number) => n.toFixed(n >= 100 ? 0 : 2)

async function main (): Promise<void> {
  const requests = option('requests', 2000)
  const connections = option('connections', 20)
  const rounds = option('rounds', 3)
  const users = option('users', 200)
  const warmup = option('warmup', 1000, 0)
  // a folder: gatehouse's CPU profile (node --cpu-prof) is written there at its exit
  const profile = process.env.BENCH_CPU_PROFILE
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-passkeys-'))
  try {
    const gatehouse = await startGatehouse(dir, 'gatehouse', {
      ENABLE_PASSKEYS: 'true', PUBLIC_URL: ORIGIN, DATA_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`
    }, profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`])
    const ceiling = await startBenchServer(dir, 'passkey-ceiling')
    const floor = await startBenchServer(dir, 'passkey-floor', 'passkey-ceiling', { CEILING_DB: join(dir, 'floor.db') })
    const subjects = [
      { name: 'bare Fastify + @simplewebauthn/server', child: ceiling, prefix: '', authenticators: [await enrol(ceiling, '')] },
      { name: 'the same + the SQLite rows §14 requires', child: floor, prefix: '', authenticators: [await enrol(floor, '')] },
      { name: 'gatehouse POST /auth/passkeys/login/verify', child: gatehouse, prefix: '/auth/passkeys', authenticators: await enrolUsers(gatehouse, users) }
    ]
    for (const subject of subjects) {
      if (warmup > 0) await measure(subject.child, `${subject.prefix}/login/verify`, await bodies(subject.child, subject.prefix, subject.authenticators, warmup), connections)
    }
    const samples: Sample[][] = [[], [], []]
    for (let round = 0; round < rounds; round++) {
      for (const [i, subject] of subjects.entries()) {
        const prepared = await bodies(subject.child, subject.prefix, subject.authenticators, requests)
        const sample = await measure(subject.child, `${subject.prefix}/login/verify`, prepared, connections)
        samples[i]?.push(sample)
        process.stdout.write(`round ${round + 1} ${subject.name}: ${fmt(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, server CPU ${fmt(sample.cpuUs)} µs per request\n`)
      }
    }
    const [bare = [], rows = [], ours = []] = samples
    // CPU per request, the ceiling's over the other's: the steadier ratio on a machine shared with other work
    const versus = (of: Sample[], to: Sample[], by: (s: Sample, t: Sample) => number): number[] => of.map((s, i) => { const t = to[i]; return t === undefined ? 0 : by(s, t) })
    const rate = (s: Sample, t: Sample): number => s.rps / t.rps
    const cpu = (s: Sample, t: Sample): number => t.cpuUs / s.cpuUs
    const spread = (list: number[]) => `median ${fmt(median(list))} (min ${fmt(Math.min(...list))}, max ${fmt(Math.max(...list))})`
    const line = (name: string, of: Sample[], to: Sample[]) => `${name}: by req/s ${spread(versus(of, to, rate))}; by CPU per request ${spread(versus(of, to, cpu))}\n`
    const summary = (name: string, of: Sample[]) => `${name} median ${fmt(median(of.map((s) => s.rps)))} req/s, ${fmt(median(of.map((s) => s.cpuUs)))} µs CPU per request\n`
    process.stdout.write(`\n${requests} sign-ins per run over ${users} users, ${connections} connections, ${rounds} rounds after ${warmup} uncounted, ${cpus().length} cores\n` +
      summary('ceiling', bare) + summary('floor', rows) + summary('gatehouse', ours) +
      line('gatehouse ÷ ceiling (target ≥ 0.80)', ours, bare) +
      line('floor ÷ ceiling (the most any sign-in keeping §14\'s rows on SQLite could reach)', rows, bare) +
      line('gatehouse ÷ floor', ours, rows))
  } finally {
    await stopAll()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
