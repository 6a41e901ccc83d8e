import { spawn } from 'node:child_process'
import { ROOT, TSX } from './server-process.js'

export const CLI_PASSWORD = 'Cli-Pass-123!'

export interface Run { code: number | null, stdout: string, stderr: string }

/**
 * The real CLI, with exactly this environment: nothing of the test process (a JWT_SECRET, a
 * DATABASE_URL) leaks in. Cheap argon2 parameters keep it quick; it is still argon2id.
 */
export async function cli (args: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  const child = spawn(process.execPath, [...TSX, 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ARGON2_MEMORY_COST: '1024', ARGON2_TIME_COST: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdin.end(stdin)
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}
