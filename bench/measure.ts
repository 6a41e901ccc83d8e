import autocannon from 'autocannon'
import type { VerifyRun } from './argon2-worker.js'
import { cpuSeconds, rssMb } from './proc.js'
import { assertAlive, BenchError, type Argon2Child, type Child } from './servers.js'

/** One measured run of one process: throughput, latency, its CPU per request and its RSS after. */
export interface Sample {
  rps: number
  p50: number
  p99: number
  /** server CPU (user + system) per completed request, microseconds */
  cpuUs: number
  /** share of one core the server used during the run */
  cpuBusy: number
  rssMb: number
  requests: number
  /** non-2xx responses, connection errors and timeouts */
  bad: number
}

export interface Target {
  path: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** a fresh body for each request (autocannon's setupRequest): each sign-in as another user, single-use credentials such as authorization codes */
  nextBody?: () => string
}

/** `amount`: a run of that many requests (a pool of single-use bodies), not of `seconds` */
export interface Load { connections: number, pipelining: number, seconds: number, amount?: number }

const DRAIN_TIMEOUT_MS = 60_000
const DRAIN_STEP_MS = 500

/**
 * Waits until the process is idle (under 5% of a core for half a second): a login run ends with
 * up to 50 logins still hashing, and they must not spill into the next measurement. Bounded.
 */
export async function drain (child: Child): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  let before = cpuSeconds(child.pid)
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, DRAIN_STEP_MS))
    assertAlive(child)
    const now = cpuSeconds(child.pid)
    if (now - before < 0.05 * DRAIN_STEP_MS / 1000) return
    before = now
  }
  process.stderr.write(`warning: ${child.name} was still busy ${DRAIN_TIMEOUT_MS / 1000} s after a run\n`)
}

/** autocannon against `child` for `load.seconds`, with the child's /proc read around it. */
export async function loadTest (child: Child, target: Target, load: Load): Promise<Sample> {
  assertAlive(child)
  const cpuBefore = cpuSeconds(child.pid)
  const instance = autocannon({
    url: child.url + target.path,
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    ...(target.nextBody !== undefined && { requests: [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, body: target.nextBody?.() }) }] }),
    connections: load.connections,
    pipelining: load.pipelining,
    duration: load.seconds,
    ...(load.amount === undefined ? {} : { amount: load.amount })
  })
  // autocannon stops itself at the duration; this bounds it if the server stops answering
  const guard = setTimeout(() => instance.stop(), (load.seconds + 30) * 1000)
  let result
  try {
    result = await instance
  } finally {
    clearTimeout(guard)
  }
  assertAlive(child)
  const cpuRun = cpuSeconds(child.pid) - cpuBefore
  const requests = result.requests.total
  if (requests === 0) throw new BenchError(`${child.name} ${target.path}: no request completed`)
  // up to connections × pipelining requests are still queued when autocannon stops: the server
  // spends their CPU during the drain, so CPU per request counts them (sent) and that time
  await drain(child)
  const cpu = cpuSeconds(child.pid) - cpuBefore
  const rss = rssMb(child.pid)
  return {
    rps: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: (cpu / Math.max(requests, result.requests.sent)) * 1e6,
    cpuBusy: cpuRun / result.duration,
    rssMb: rss,
    requests,
    bad: result.non2xx + result.errors + result.timeouts
  }
}

/** The same figures for raw argon2 verify in its own process (the login ceiling). */
export async function argon2Test (child: Argon2Child, load: Load, kind: VerifyRun['kind'] = 'argon2'): Promise<Sample> {
  assertAlive(child)
  const cpuBefore = cpuSeconds(child.pid)
  const result = await child.run({ seconds: load.seconds, concurrency: load.connections, kind })
  const cpu = cpuSeconds(child.pid) - cpuBefore
  if (result.ops === 0) throw new BenchError('argon2: no verify completed')
  const seconds = result.elapsedMs / 1000
  return {
    rps: result.ops / seconds,
    p50: result.p50,
    p99: result.p99,
    cpuUs: (cpu / result.ops) * 1e6,
    cpuBusy: cpu / seconds,
    rssMb: rssMb(child.pid),
    requests: result.ops,
    bad: result.failures
  }
}
