import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApiKey, createUser, signIn, USER } from './client.js'
import { processTree, rssMb } from './proc.js'
import { OptionError, parseOptions, type Options } from './options.js'
import { report, type Outcome, type SetupReport } from './report.js'
import { startNginx } from './nginx.js'
import { startUserinfoFloor } from './oidc.js'
import { startPeers, type Peers } from './peers.js'
import { scenarios } from './scenarios.js'
import { startArgon2, startBare, startGatehouse, stop, stopAll, type Argon2Child, type Child } from './servers.js'
import { setupOf, type Setup } from './setups.js'
import { median } from './stats.js'

/**
 * `npm run bench`: gatehouse as in production against the ceilings it is judged by — a bare
 * Fastify hello world for the guarded routes, raw argon2 verify for login — alternating in one
 * run, medians of the rounds reported as markdown; beside it, two hand-written peers
 * (bench/peers.ts) against the same ceiling. Scenarios: bench/scenarios.ts; options: bench/options.ts.
 */
let options: Options
try {
  options = parseOptions(process.argv.slice(2), process.env)
} catch (err) {
  if (!(err instanceof OptionError)) throw err
  process.stderr.write(`bench: ${err.message}\n`)
  process.exit(2)
}
const { seconds, rounds, processes: fresh } = options

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))
const cleanups: Array<() => Promise<void>> = []
let cleaned = false

async function cleanup (): Promise<void> {
  if (cleaned) return
  cleaned = true
  await stopAll()
  for (const undo of cleanups) await undo().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`))
  rmSync(dir, { recursive: true, force: true })
}

// every run (and its warm-up) bounded by its duration and its drain bound (60 s), plus start-up
// and shut-down: past that something hangs, and the run is stopped
// (`peers` is two rows, so two runs of each)
const rows = options.scenarios.length + (options.scenarios.includes('peers') ? 1 : 0)
const runs = fresh * options.setups.length * rows * 2 * (rounds + 1)
const budgetMs = (runs * (seconds + 70) + fresh * options.setups.length * 120) * 1000
const watchdog = setTimeout(() => {
  process.stderr.write(`bench failed: still running after ${budgetMs / 1000} s\n`)
  cleanup().finally(() => process.exit(1))
}, budgetMs)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { cleanup().finally(() => process.exit(130)) })
}

/**
 * One setup in `fresh` server processes, one after another: their rounds pooled (medians over all),
 * and each outcome's per-process median ratio kept, so the report shows the spread between them.
 */
async function measureFresh (setup: Setup, bare: Child, argon2: Argon2Child, peers: Peers | undefined): Promise<SetupReport | undefined> {
  const each: SetupReport[] = []
  for (let n = 1; n <= fresh; n++) {
    const result = await measure(setup, bare, argon2, peers)
    if (result === undefined) return undefined
    each.push(result)
  }
  const [first] = each
  if (first === undefined || fresh === 1) return first
  return {
    ...first,
    rssAtStartMb: median(each.map((r) => r.rssAtStartMb)),
    freshProcesses: fresh,
    outcomes: first.outcomes.map((o, i) => ({
      ...o,
      rounds: each.flatMap((r) => r.outcomes[i]?.rounds ?? []),
      processRatios: each.map((r) => median(r.outcomes[i]?.rounds.map((x) => x.subject.rps / x.ceiling.rps) ?? []))
    }))
  }
}

/** gatehouse processes started so far: each gets a data folder of its own */
let started = 0

/** One setup: its gatehouse started, warmed, measured in alternating rounds, and stopped. */
async function measure (setup: Setup, bare: Child, argon2: Argon2Child, peers: Peers | undefined): Promise<SetupReport | undefined> {
  const ids = options.scenarios.filter((id) => id in setup.targets)
  if (ids.length === 0) return undefined
  cleanups.push(() => setup.cleanup())
  started += 1
  const gatehouse = await startGatehouse(dir, `gatehouse-${setup.id}-${started}`, await setup.prepare())
  // after start-up, which has hashed the admin's password once (argon2 memory included)
  const rssAtStartMb = rssMb(gatehouse.pid)
  await createUser(gatehouse)
  const user = await signIn(gatehouse, USER)
  // nginx in front of this gatehouse and of the bare server, with the configuration of docs/proxies.md
  const nginx = ids.includes('chain') ? await startNginx(dir, gatehouse, bare) : undefined
  // a key for the API-key rows, made once: it outlives every round
  const apiKey = ids.includes('verify-key') || ids.includes('protected-key') ? await createApiKey(gatehouse, user.token) : undefined
  // a fresh process beside each gatehouse process, so both are measured at the same point of the run
  const userinfoFloor = ids.includes('userinfo-floor') ? await startUserinfoFloor(dir, `userinfo-floor-${started}`) : undefined
  const chosen = scenarios({ gatehouse, bare, argon2, nginx, peers, userinfoFloor }, user.id, seconds, apiKey).filter((s) => ids.includes(s.id))

  // warm-up: JIT and the verified-token cache; not recorded
  const warm = { connections: 50, pipelining: 1, seconds: Math.min(2, seconds) }
  for (const s of chosen) {
    await s.ceiling(warm)
    await s.subject(warm, user.token)
  }
  const outcomes: Outcome[] = chosen.map((s) => ({
    name: s.name, load: `${s.load.connections}×${s.load.pipelining}`, ceilingName: s.ceilingName, target: setup.targets[s.id], gatehouse: s.gatehouse, login: s.id === 'login', rounds: []
  }))
  for (let round = 1; round <= rounds; round++) {
    // a fresh token each round, so a long duration never outlives the access token
    const { token } = await signIn(gatehouse, USER)
    for (const [i, s] of chosen.entries()) {
      process.stderr.write(`${setup.id} round ${round}/${rounds}: ${s.name} (${s.load.connections}×${s.load.pipelining})\n`)
      const ceiling = await s.ceiling(s.load)
      const subject = await s.subject(s.load, token)
      outcomes[i]?.rounds.push({ ceiling, subject })
    }
  }
  // WORKERS=N forks; a build without it ignores the variable and serves from one process
  const processes = processTree(gatehouse.pid).length
  if (nginx !== undefined) await stop(nginx.chain.process)
  if (userinfoFloor !== undefined) await stop(userinfoFloor.child.process)
  await stop(gatehouse.process)
  await setup.cleanup()
  return { title: setup.title, outcomes, rssTargets: setup.rssTargets, rssAtStartMb, processes }
}

async function main (): Promise<void> {
  const setups = options.setups.map(setupOf)
  const [bare, argon2] = await Promise.all([startBare(dir), startArgon2(dir)])
  // once per run, like bare, when some setup runs them; stopped with everything else by stopAll()
  const withPeers = options.scenarios.includes('peers') && setups.some((s) => 'peers' in s.targets)
  const peers = withPeers ? await startPeers(dir) : undefined
  const reports: SetupReport[] = []
  for (const setup of setups) {
    const result = await measureFresh(setup, bare, argon2, peers)
    if (result !== undefined) reports.push(result)
  }
  const load = loadavg().map((l) => l.toFixed(2)).join(' ')
  process.stdout.write(report(reports, { seconds, rounds, cores: availableParallelism(), load, command: process.argv.slice(2).join(' ') }) + '\n')
}

let failed = false
try {
  await main()
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`)
  failed = true
}
clearTimeout(watchdog)
await cleanup()
// a report even on MISS; non-zero only when a server (or the benchmark itself) failed
process.exit(failed ? 1 : 0)
