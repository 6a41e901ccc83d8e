import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, mkdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { tempDir, type TestContext } from '../helper.js'
import { ROOT } from './server-process.js'

/**
 * A copy of the repository as a clone would hold it: the files git tracks, plus the new files it
 * does not ignore (so an uncommitted change is tested too; in CI's clean checkout it is exactly
 * HEAD). No node_modules, dist/, data/, .env: whatever this checkout built or generated is absent.
 */
export function copyRepository (t: TestContext): string {
  const dir = tempDir(t)
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  for (const file of listed.split('\0').filter((f) => f !== '')) {
    mkdirSync(join(dir, dirname(file)), { recursive: true })
    try {
      copyFileSync(join(ROOT, file), join(dir, file))
    } catch (err) {
      // a tracked file deleted in the working tree is deleted in the copy too
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  return dir
}

/**
 * This checkout's node_modules hard-linked into `dir` (`cp -al`: seconds, not the minutes
 * of an install on a 2-core machine). These are the packages `npm ci` installed from the same
 * lockfile (.ci/run does that first); npm replaces a package by writing a new directory, never
 * over the linked files, so an install in the copy cannot change this checkout's.
 */
export function linkNodeModules (dir: string): void {
  try {
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { stdio: 'pipe' })
  } catch {
    // the temporary folder on another file system (EXDEV): a real copy, slower but the same tree
    execFileSync('rm', ['-rf', join(dir, 'node_modules')])
    execFileSync('cp', ['-a', '--reflink=auto', join(ROOT, 'node_modules'), join(dir, 'node_modules')])
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => { resolve() }))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** A PATH without any node_modules/.bin: the one a new terminal has, not the one npm gave the tests. */
export function shellPath (): string {
  return (process.env.PATH ?? '/usr/bin:/bin').split(':').filter((p) => !p.includes('node_modules')).join(':')
}

export interface Shell { code: number | null, output: string, ms: number }

/**
 * `bash -c script` in `cwd` as the leader of a process group of its own, with exactly `env`:
 * what it starts in the background stays in that group, which `stop` signals whole (SIGINT, as
 * Ctrl-C in a terminal does) and t.teardown kills whatever is left.
 */
export function bash (t: TestContext, script: string, cwd: string, env: Record<string, string>, ms: number): { done: Promise<Shell>, stop: () => void } {
  const started = Date.now()
  const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const group = child.pid ?? 0
  const signal = (name: NodeJS.Signals) => { try { process.kill(-group, name) } catch {} }
  const timer = setTimeout(() => { signal('SIGKILL') }, ms)
  t.teardown(() => { clearTimeout(timer); signal('SIGKILL') })
  const done = new Promise<Shell>((resolve) => {
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output, ms: Date.now() - started }) })
  })
  return { done, stop: () => { signal('SIGINT') } }
}
