import { fork, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import threadPool from '../src/runtime/thread-pool.cjs'
import type { VerifyResult, VerifyRun } from './argon2-worker.js'

/** A process the benchmark started: its pid for /proc, its address, and its log for errors. */
export interface Child {
  name: string
  process: ChildProcess
  pid: number
  url: string
  logFile: string
}

export class BenchError extends Error {}

const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 12_000
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
/** Every process started, registered at spawn time so a failed start is stopped too. */
const started: ChildProcess[] = []

/**
 * The libuv pool every benchmark process gets alike (the caller's UV_THREADPOOL_SIZE, else
 * gatehouse's default), so that the argon2 ceiling hashes on as many threads as gatehouse does.
 */
export function benchPoolSize (): number {
  return Number(process.env.UV_THREADPOOL_SIZE ?? threadPool.defaultThreadPoolSize())
}

/** A clean environment: nothing from the caller's shell changes the server, except the pool size. */
function baseEnv (): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', UV_THREADPOOL_SIZE: String(benchPoolSize()) }
}

/** A port nothing listens on right now, for a child to take. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      server.close(() => { typeof address === 'object' && address !== null ? resolve(address.port) : reject(new BenchError('no port')) })
    })
  })
}

function tail (file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')
  } catch {
    return ''
  }
}

/** Polls `path` until it answers 200, the child dies, or the time is up. */
export async function waitReady (child: Child, path: string, headers: Record<string, string> = {}): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) break
    try {
      const res = await fetch(child.url + path, { headers, signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new BenchError(`${child.name} did not become ready (exit ${child.process.exitCode ?? child.process.signalCode ?? 'none'}):\n${tail(child.logFile)}`)
}

/** Registers a process started elsewhere (nginx), so that stopAll() stops it too. */
export function registerChild (proc: ChildProcess): void {
  started.push(proc)
}

/** Where a child answers 200 once it is ready (with the headers it needs there). */
interface Ready { path: string, headers?: Record<string, string> }

async function startChild (name: string, script: string, env: NodeJS.ProcessEnv, dir: string, ready: Ready, nodeArgs: string[] = []): Promise<Child> {
  const port = await freePort()
  const logFile = join(dir, `${name}.log`)
  const fd = openSync(logFile, 'a')
  // the log goes to a file, as a production service writes to its journal: never a full pipe
  const proc = spawn(process.execPath, [...nodeArgs, script], { cwd: dir, env: { ...env, PORT: String(port) }, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  started.push(proc)
  if (proc.pid === undefined) throw new BenchError(`${name} did not start`)
  const child: Child = { name, process: proc, pid: proc.pid, url: `http://${HOST}:${port}`, logFile }
  await waitReady(child, ready.path, ready.headers)
  return child
}

export const ADMIN = { email: 'bench-admin@example.com', password: 'Bench-Password-1!' }

/**
 * gatehouse as in production: APP_ENV=production, a 48-byte secret, default argon2 parameters,
 * LOG_LEVEL=info without request lines. The per-address login rate limit and the failure
 * lock-out are lifted because every benchmark request comes from 127.0.0.1 (the login scenario
 * measures hashing, not 429s).
 * cwd is the temp dir, so no stray .env is read. `env` adds the setup's own (DATABASE_URL, WORKERS).
 */
export async function startGatehouse (dir: string, name: string, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<Child> {
  const dataDir = join(dir, name)
  mkdirSync(dataDir)
  return await startChild(name, here('../src/start.cjs'), {
    ...baseEnv(),
    APP_ENV: 'production',
    JWT_SECRET: randomBytes(36).toString('base64'),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    HOST,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOGIN_RATE_LIMIT: '1000000/s',
    REFRESH_RATE_LIMIT: '1000000/s',
    // each sign-in reserves a place in the failure counts before it hashes: 50 at once from one
    // address would otherwise meet the lock-out's ceiling while still in flight
    LOGIN_MAX_FAILURES: '1000000',
    LOGIN_ACCOUNT_MAX_FAILURES: '1000000',
    ...env
  }, dir, { path: '/health' }, nodeArgs)
}

/** A server script of bench/ (`script`.js) as `name`, ready once GET / answers 200: the passkey ceiling and floor. */
export async function startBenchServer (dir: string, name: string, script = name, env: NodeJS.ProcessEnv = {}): Promise<Child> {
  return await startChild(name, here(`./${script}.js`), { ...baseEnv(), ...env }, dir, { path: '/' })
}

export async function startBare (dir: string, nodeArgs: string[] = []): Promise<Child> {
  return await startChild('bare', here('./bare-server.js'), baseEnv(), dir, { path: '/' }, nodeArgs)
}

/**
 * A comparison peer (bench/peer-*.ts) with its own fresh SQLite file; ready once it serves its
 * user to the bench's token, so a peer that refuses the token fails here, not in the results.
 */
export async function startPeer (dir: string, name: string, env: { JWT_SECRET: string, USER_ID: string }, token: string): Promise<Child> {
  return await startChild(name, here(`./${name}.js`), { ...baseEnv(), ...env, DB_FILE: join(dir, `${name}.db`) }, dir, {
    path: `/users/${env.USER_ID}`,
    headers: { authorization: `Bearer ${token}` }
  })
}

/** The argon2 verify child (see argon2-worker.ts); `run` asks it for one timed run. */
export interface Argon2Child extends Child {
  run (run: VerifyRun): Promise<VerifyResult>
}

export async function startArgon2 (dir: string): Promise<Argon2Child> {
  const logFile = join(dir, 'argon2.log')
  const fd = openSync(logFile, 'a')
  const proc = fork(here('./argon2-worker.js'), [], { cwd: dir, env: baseEnv(), stdio: ['ignore', fd, fd, 'ipc'] })
  closeSync(fd)
  started.push(proc)
  if (proc.pid === undefined) throw new BenchError('argon2 worker did not start')
  await onceMessage(proc, READY_TIMEOUT_MS, 'argon2 worker start')
  const child: Argon2Child = {
    name: 'argon2',
    process: proc,
    pid: proc.pid,
    url: '',
    logFile,
    async run (run) {
      const reply = onceMessage(proc, (run.seconds + 30) * 1000, 'argon2 run')
      proc.send(run)
      return await reply as VerifyResult
    }
  }
  return child
}

async function onceMessage (proc: ChildProcess, timeoutMs: number, what: string): Promise<unknown> {
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { cleanup(); reject(new BenchError(`${what} timed out`)) }, timeoutMs)
    const onMessage = (message: unknown) => { cleanup(); resolve(message) }
    const onExit = (code: number | null) => { cleanup(); reject(new BenchError(`${what}: the process exited (${code})`)) }
    function cleanup () {
      clearTimeout(timer)
      proc.off('message', onMessage)
      proc.off('exit', onExit)
    }
    proc.on('message', onMessage)
    proc.on('exit', onExit)
  })
}

/** SIGTERM, then SIGKILL if it has not exited within the bound. */
export async function stop (proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** Stops every process the benchmark started. */
export async function stopAll (): Promise<void> {
  await Promise.allSettled(started.map(stop))
}

/** True while the child runs; a benchmark against a dead server is a failure, not a result. */
export function assertAlive (child: Child): void {
  if (child.process.exitCode !== null || child.process.signalCode !== null) {
    throw new BenchError(`${child.name} exited (${child.process.exitCode ?? child.process.signalCode}):\n${tail(child.logFile)}`)
  }
}
