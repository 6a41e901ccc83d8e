import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuSeconds, rssMb } from './proc.js'
import { adminFlow, CREATED_PASSWORD, readerFlow, Session, stormFlow, userFlow, type Account, type FlowContext } from './soak-flows.js'
import { SoakClient } from './soak-http.js'
import { Recorder, WriteTracker } from './soak-record.js'
import { rssFigures, type Sample } from './soak-memory.js'
import { formatReport, type Check, type SoakFigures } from './soak-report.js'
import { serverErrorLines, SOAK_ADMIN, startSoakServer, type SoakServer } from './soak-server.js'
import { benchPoolSize } from './servers.js'
import { percentile } from './stats.js'
import { verifyWrites, type Verification } from './soak-verify.js'

export interface SoakLimits {
  /** RSS growth from the baseline to the end, as a fraction (0.10 = 10 %) */
  rssGrowth: number
  /** p99 of /api reads while the login storm runs, ms */
  readP99Ms: number
}

/** The thresholds `npm run soak` holds: RSS grows less than 5 % from minute 2, reads stay under 20 ms. */
export const STRICT_LIMITS: SoakLimits = { rssGrowth: 0.05, readP99Ms: 20 }

export interface SoakOptions {
  durationMs: number
  users?: number
  admins?: number
  readers?: number
  /** concurrent login loops; default twice the argon2 (libuv) pool, so it is never idle */
  storm?: number
  limits?: SoakLimits
  /** progress lines while it runs */
  progress?: (line: string) => void
}

export interface SoakResult extends SoakFigures { ok: boolean, text: string }

const SEED_BATCH = 4

/**
 * The soak: the production server as a child process, seeded over its API, then a mixed load
 * for `durationMs` — users signing in, reading, editing themselves, refreshing and signing out;
 * admins creating, editing, listing and deleting users; paced readers; and a login storm that
 * keeps every argon2 thread busy — with the server's RSS sampled throughout. Then every
 * acknowledged write is read back. Resolves with the figures, the checks and the printed report.
 */
export async function runSoak (options: SoakOptions): Promise<SoakResult> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-soak-'))
  let server: SoakServer | undefined
  try {
    server = await startSoakServer(dir)
    const figures = await load(server, options)
    const exitCode = await server.stop()
    const errorLines = serverErrorLines(server.logFile)
    figures.checks.push(
      { name: 'no error lines in the server log', ok: errorLines.length === 0, value: errorLines.length === 0 ? '0' : `${errorLines.length}, first: ${errorLines[0]?.slice(0, 200)}` },
      { name: 'server ran throughout and exited cleanly on SIGTERM', ok: exitCode === 0, value: `exit code ${String(exitCode)}` }
    )
    const ok = figures.checks.every((c) => c.ok)
    return { ...figures, ok, text: formatReport(figures) }
  } finally {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Settings { durationMs: number, users: number, admins: number, readers: number, storm: number, poolSize: number, limits: SoakLimits }

/** What the load phase measured, beside what the recorder counted. */
interface Run { samples: Sample[], startMs: number, elapsedMs: number, serverCpuBusy: number }

async function load (server: SoakServer, options: SoakOptions): Promise<SoakFigures> {
  const poolSize = benchPoolSize()
  const settings: Settings = {
    durationMs: options.durationMs,
    users: options.users ?? 6,
    admins: options.admins ?? 2,
    readers: options.readers ?? 2,
    storm: options.storm ?? 2 * poolSize,
    poolSize,
    limits: options.limits ?? STRICT_LIMITS
  }
  let stopped = false
  const ctx: FlowContext = {
    url: new URL(server.url),
    recorder: new Recorder(),
    tracker: new WriteTracker(),
    stopped: () => stopped,
    loginsInFlight: 0
  }
  const admin = await Session.open(ctx, SOAK_ADMIN)
  const accounts = await seed(ctx, admin, settings.users + settings.storm)
  const run = await drive(server, ctx, accounts, settings, () => { stopped = true }, options.progress)
  const verification = await verifyWrites(ctx, admin.client, await admin.token())
  admin.close()
  return judge(ctx, run, verification, settings)
}

/** Every client at once for the duration, with the server's RSS sampled throughout. */
async function drive (server: SoakServer, ctx: FlowContext, accounts: Account[], settings: Settings, stop: () => void, progress?: (line: string) => void): Promise<Run> {
  const { durationMs, users } = settings
  const startMs = performance.now()
  const cpuBefore = cpuSeconds(server.pid)
  const samples: Sample[] = []
  const sample = () => {
    try {
      samples.push({ t: performance.now() - startMs, rss: rssMb(server.pid), loginsInFlight: ctx.loginsInFlight })
    } catch {
      // /proc/<pid> is gone: the server died, and the exit check says so
      stop()
    }
  }
  sample()
  const r = ctx.recorder
  const timers = [
    setInterval(sample, Math.min(5000, Math.max(1000, durationMs / 60))),
    setInterval(() => progress?.(`${Math.round((performance.now() - startMs) / 1000)} s: ${r.total} requests, RSS ${samples.at(-1)?.rss.toFixed(1)} MB, ${r.serverErrors + r.networkErrors + r.unexpected} failures`), 30_000),
    // once the time is up, a flow stops at its next request rather than finishing its round
    setTimeout(() => { stop(); r.draining = true }, durationMs)
  ]
  const flows = [
    ...accounts.slice(0, users).map((a) => userFlow(ctx, a)),
    ...accounts.slice(users).map((a) => stormFlow(ctx, a)),
    ...Array.from({ length: settings.admins }, (_, i) => adminFlow(ctx, SOAK_ADMIN, `a${i}`)),
    ...Array.from({ length: settings.readers }, () => readerFlow(ctx, SOAK_ADMIN, accounts.map((a) => a.id)))
  ]
  for (const outcome of await Promise.allSettled(flows)) {
    if (outcome.status === 'rejected') r.mismatch(`a client stopped: ${String(outcome.reason)}`)
  }
  r.draining = false
  for (const timer of timers) clearTimeout(timer)
  sample()
  const elapsedMs = performance.now() - startMs
  return { samples, startMs, elapsedMs, serverCpuBusy: (cpuSeconds(server.pid) - cpuBefore) / (elapsedMs / 1000) }
}

/** The figures and the checks on them (the log and exit checks are added once the server is down). */
function judge (ctx: FlowContext, run: Run, verification: Verification, settings: Settings): SoakFigures {
  const { durationMs, poolSize, limits } = settings
  const r = ctx.recorder
  const rss = rssFigures(run.samples, durationMs)
  const warmupMs = Math.min(10_000, durationMs / 10)
  const readLatencies = r.reads.filter(([at]) => at >= run.startMs + warmupMs).map(([, ms]) => ms).sort((a, b) => a - b)
  const reads = { count: readLatencies.length, p50: percentile(readLatencies, 50), p99: percentile(readLatencies, 99), fromMs: warmupMs }
  // a storm loop between a login and the next (its logout) may be caught at a sample: one in ten may dip
  const stormSamples = run.samples.filter((s) => s.t >= warmupMs && s.t < durationMs)
  const saturated = stormSamples.filter((s) => s.loginsInFlight >= poolSize).length / stormSamples.length
  const logins = (r.kinds.get('login') ?? 0) + (r.kinds.get('login-wrong') ?? 0)
  const checks: Check[] = [
    { name: 'no 5xx responses', ok: r.serverErrors === 0, value: r.shed === 0 ? String(r.serverErrors) : `${r.serverErrors}, ${r.shed} of them 503 load shedding (the event loop lagged over 1 s)` },
    { name: 'no network errors or timeouts', ok: r.networkErrors === 0, value: String(r.networkErrors) },
    { name: 'every status the one the flow expects', ok: r.unexpected === 0, value: `${r.unexpected} unexpected` },
    { name: 'every acknowledged write readable at the end', ok: verification.mismatches === 0 && verification.checked > 0, value: `${verification.checked} users checked, ${verification.mismatches} mismatches` },
    { name: `RSS growth from ${Math.round(rss.baselineAtMs / 1000)} s to the end < ${limits.rssGrowth * 100} %`, ok: rss.growth < limits.rssGrowth, value: `${(rss.growth * 100).toFixed(1)} %` },
    { name: `p99 of /api reads during the login storm < ${limits.readP99Ms} ms`, ok: reads.count > 0 && reads.p99 < limits.readP99Ms, value: `${reads.p99.toFixed(1)} ms over ${reads.count} reads` },
    { name: `argon2 pool saturated: ≥ ${poolSize} logins in flight at ≥ 90 % of the samples`, ok: saturated >= 0.9, value: `${(saturated * 100).toFixed(0)} % of ${stormSamples.length}` }
  ]
  return {
    durationMs,
    clients: { users: settings.users, admins: settings.admins, readers: settings.readers, storm: settings.storm },
    poolSize,
    cores: availableParallelism(),
    loadAverage: loadavg()[0] ?? 0,
    recorder: r,
    rss,
    reads,
    loginsPerSecond: logins / (run.elapsedMs / 1000),
    serverCpuBusy: run.serverCpuBusy,
    verification,
    checks
  }
}

/**
 * The accounts the user and storm clients sign in as, created through POST /api/users, a few at
 * a time: each costs an argon2 hash, and one after another they would lengthen every run.
 */
async function seed (ctx: FlowContext, admin: Session, count: number): Promise<Account[]> {
  const token = await admin.token()
  const create = async (i: number, client: SoakClient): Promise<Account> => {
    const body = { email: `soak-seed-${i}@example.com`, password: CREATED_PASSWORD, name: `Soak seed ${i}` }
    const reply = await ctx.recorder.call(client, 'create', 'POST', '/api/users', { token, body }, 201)
    const id = (reply?.body as { id?: unknown } | undefined)?.id
    if (typeof id !== 'string') throw new Error(`seeding ${body.email} failed: ${ctx.recorder.examples.at(-1) ?? 'no answer'}`)
    ctx.tracker.created(id, { email: body.email, name: body.name, age: null })
    return { id, email: body.email, password: CREATED_PASSWORD }
  }
  const accounts: Account[] = []
  for (let from = 0; from < count; from += SEED_BATCH) {
    const clients = Array.from({ length: Math.min(SEED_BATCH, count - from) }, () => new SoakClient(ctx.url))
    try {
      accounts.push(...await Promise.all(clients.map((client, i) => create(from + i, client))))
    } finally {
      for (const client of clients) client.close()
    }
  }
  return accounts
}
