import { spawn } from 'node:child_process'
import { join } from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')
/**
 * How a child runs TypeScript: through tsx, as the tests do (test/tsx.js), so the coverage a child
 * records under tap maps to the sources like the test processes' own.
 */
export const TSX = ['--import', join(ROOT, 'test', 'tsx.js')]

export interface Exit { code: number | null, signal: NodeJS.Signals | null, at: number }

/** One JSON line of the server's log (pino). */
export interface LogLine { pid: number, level: number, msg: string, [key: string]: unknown }

export interface ServerProcess {
  child: ReturnType<typeof spawnServer>
  /** Resolves once the process has exited and its output is closed. */
  exited: Promise<Exit>
  stdout (): string
  stderr (): string
  /** The JSON log lines written so far. */
  lines (): LogLine[]
  /** Resolves with the first match of `pattern` in stdout, as soon as it is written. */
  waitFor (pattern: RegExp, ms?: number): Promise<RegExpExecArray>
}

function spawnServer (env: Record<string, string>) {
  return spawn(process.execPath, [...TSX, 'src/server.ts'], {
    cwd: ROOT,
    // a loaded test machine lags past any event-loop threshold: load shedding (503) is tested on
    // its own (test/plugins/under-pressure.test.ts), so a child sheds only when a test asks it to
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', MAX_EVENT_LOOP_DELAY: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

/**
 * The real server as a child process (src/server.ts through tsx, as `npm run dev` runs it) with
 * exactly `env`: nothing of the test process's environment leaks in but PATH and HOME.
 */
export function startServer (env: Record<string, string>): ServerProcess {
  const child = spawnServer(env)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => { resolve({ code, signal, at: Date.now() }) })
  })
  function waitFor (pattern: RegExp, ms = 20_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { done(); reject(new Error(`no ${pattern} in ${ms} ms: ${stdout}${stderr}`)) }, ms)
      const look = () => {
        const match = pattern.exec(stdout)
        if (match !== null) { done(); resolve(match) }
      }
      const done = () => { clearTimeout(timer); child.stdout.off('data', look) }
      child.stdout.on('data', look)
      look()
    })
  }
  return {
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () => stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine),
    waitFor
  }
}
