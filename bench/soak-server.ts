import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { assertAlive, benchPoolSize, BenchError, freePort, type Child } from './servers.js'

const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 15_000

export const SOAK_ADMIN = { email: 'soak-admin@example.com', password: 'Soak-Admin-Password-1!' }

/** The gatehouse process under soak, and how it ended. */
export interface SoakServer extends Child {
  /** SIGTERM, then SIGKILL past the bound; resolves with the exit code (null when killed). */
  stop (): Promise<number | null>
}

/**
 * The compiled entry when this file runs compiled (`npm run soak`, as `npm start` runs it), else the TypeScript
 * source through tsx (the test runs under tsx and must not depend on a stale build).
 */
function serverCommand (): string[] {
  if (!import.meta.url.endsWith('.ts')) return [fileURLToPath(new URL('../src/start.cjs', import.meta.url))]
  // resolved here, since the child's cwd (the temp dir) has no node_modules
  return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../src/server.ts', import.meta.url))]
}

/**
 * gatehouse as in production: APP_ENV=production, a 48-byte secret, default argon2 parameters,
 * audit lines at info. Every soak client comes from 127.0.0.1, so the per-address limits and the
 * failure lock-out are lifted: the soak is about leaks and errors, not 429s. cwd is the temp
 * dir, so no stray .env is read; only the libuv pool size passes through from the caller.
 */
export async function startSoakServer (dir: string): Promise<SoakServer> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    APP_ENV: 'production',
    JWT_SECRET: randomBytes(48).toString('base64'),
    DATA_DIR: dir,
    HOST,
    PORT: String(port),
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: SOAK_ADMIN.email,
    ADMIN_PASSWORD: SOAK_ADMIN.password,
    LOGIN_RATE_LIMIT: '1000000/s',
    REFRESH_RATE_LIMIT: '1000000/s',
    LOGIN_MAX_FAILURES: '1000000'
  }
  // set either way: under tsx the pool has started before the entry could size it
  env.UV_THREADPOOL_SIZE = String(benchPoolSize())
  const logFile = join(dir, 'gatehouse.log')
  const fd = openSync(logFile, 'a')
  const proc = spawn(process.execPath, serverCommand(), { cwd: dir, env, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  const server: SoakServer = {
    name: 'gatehouse',
    process: proc,
    pid: proc.pid ?? 0,
    url: `http://${HOST}:${port}`,
    logFile,
    async stop () {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
  try {
    if (proc.pid === undefined) throw new BenchError('gatehouse did not start')
    await waitReady(server)
  } catch (err) {
    await server.stop()
    throw err
  }
  return server
}

async function waitReady (server: SoakServer): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    assertAlive(server)
    try {
      const res = await fetch(`${server.url}/ready`, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new BenchError(`gatehouse did not become ready:\n${readFileSync(server.logFile, 'utf8').split('\n').slice(-15).join('\n')}`)
}

/** Log lines at error or fatal (pino levels 50, 60): a soak with any of them has failed. */
export function serverErrorLines (logFile: string): string[] {
  return readFileSync(logFile, 'utf8').split('\n').filter((line) => /"level":(50|60)\b/.test(line))
}
