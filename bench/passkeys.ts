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
 * at the same concurrency. A challenge is good once, so every request needs an assertion of its
 * own: before each run the bench asks the server for `requests` challenges (login/options) and
 * signs one assertion per challenge with the software authenticator of the tests
 * (test/webauthn-authenticator.ts); autocannon then sends each body once (`amount`), in order.
 * The authenticator keeps its sign count at 0 (as synced passkeys do), so the order in which
 * concurrent requests arrive does not matter. Options (key=value or BENCH_*):
 *   requests=2000 connections=20 rounds=3 users=50; BENCH_CPU_PROFILE=<dir> profiles gatehouse
 */

const RP_ID = 'auth.bench.example'
const ORIGIN = `https://${RP_ID}`

interface Sample { rps: number, p50: number, p99: number, cpuUs: number }

function option (name: string, fallback: number): number {
  const raw = process.argv.find((a) => a.startsWith(`${name}=`))?.split('=')[1] ?? process.env[`BENCH_${name.toUpperCase()}`]
  const value = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new BenchError(`${name} must be a whole number ≥ 1`)
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
 * gatehouse's users, each with a passkey: sign-ins spread over them as in a real deployment (a
 * sign-in also bounds its user's sessions by SESSIONS_MAX_PER_USER, work that grows with the
 * sessions one user holds). Made by the seeded admin; each signs in once with the password.
 */
async function enrolUsers (child: Child, count: number): Promise<SoftAuthenticator[]> {
  const admin = await signIn(child, ADMIN)
  const out: SoftAuthenticator[] = []
  for (let i = 0; i < count; i++) {
    const user = { email: `bench-passkey-${i}@example.com`, password: 'Bench-Passkey-Password-1!', name: 'Bench Passkey' }
    await call(child, '/api/users', user, admin.token)
    out.push(await enrol(child, '/auth/passkeys', (await signIn(child, user)).token))
  }
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

async function measure (child: Child, path: string, prepared: string[], connections: number): Promise<Sample> {
  let next = 0
  const cpuBefore = cpuSeconds(child.pid)
  const result = await autocannon({
    url: child.url,
    connections,
    amount: prepared.length,
    requests: [{ method: 'POST', path, headers: { 'content-type': 'application/json' }, setupRequest: (request) => ({ ...request, body: prepared[next++] }) }]
  })
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new BenchError(`${child.name}: ${bad} of ${prepared.length} requests failed`)
  const cpuUs = (cpuSeconds(child.pid) - cpuBefore) / prepared.length * 1e6
  return { rps: result.requests.total / result.duration, p50: result.latency.p50, p99: result.latency.p99, cpuUs }
}

const fmt = (n: number) => n.toFixed(n >= 100 ? 0 : 2)

async function main (): Promise<void> {
  const requests = option('requests', 2000)
  const connections = option('connections', 20)
  const rounds = option('rounds', 3)
  const users = option('users', 50)
  // a folder: gatehouse's CPU profile (node --cpu-prof) is written there at its exit
  const profile = process.env.BENCH_CPU_PROFILE
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-passkeys-'))
  try {
    const gatehouse = await startGatehouse(dir, 'gatehouse', {
      ENABLE_PASSKEYS: 'true', PUBLIC_URL: ORIGIN, DATA_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`
    }, profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`])
    const ceiling = await startBenchServer(dir, 'passkey-ceiling')
    const subjects = [
      { name: 'bare Fastify + @simplewebauthn/server', child: ceiling, prefix: '', authenticators: [await enrol(ceiling, '')] },
      { name: 'gatehouse POST /auth/passkeys/login/verify', child: gatehouse, prefix: '/auth/passkeys', authenticators: await enrolUsers(gatehouse, users) }
    ]
    const samples: Sample[][] = [[], []]
    for (let round = 0; round < rounds; round++) {
      for (const [i, subject] of subjects.entries()) {
        const prepared = await bodies(subject.child, subject.prefix, subject.authenticators, requests)
        const sample = await measure(subject.child, `${subject.prefix}/login/verify`, prepared, connections)
        samples[i]?.push(sample)
        process.stdout.write(`round ${round + 1} ${subject.name}: ${fmt(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, server CPU ${fmt(sample.cpuUs)} µs per request\n`)
      }
    }
    const ratios = (samples[1] ?? []).map((s, i) => s.rps / (samples[0]?.[i]?.rps ?? Infinity))
    const rps = samples.map((list) => median(list.map((s) => s.rps)))
    process.stdout.write(`\n${requests} sign-ins per run over ${users} users, ${connections} connections, ${rounds} rounds, ${cpus().length} cores\n` +
      `ceiling median ${fmt(rps[0] ?? 0)} req/s; gatehouse median ${fmt(rps[1] ?? 0)} req/s\n` +
      `ratio median ${fmt(median(ratios))} (min ${fmt(Math.min(...ratios))}, max ${fmt(Math.max(...ratios))}); target ≥ 0.80\n`)
  } finally {
    await stopAll()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
