import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { buildFrom, databaseEnv, login, tempDir, TEST_SECRET, testConfig } from '../helper.js'
import { CLI_PASSWORD } from './cli-process.js'
import { ROOT, TSX } from './server-process.js'

/*
 * The CLI's password prompt (src/cli/password.ts) on a real pseudo-terminal: test/process/terminal.py
 * forks the command onto one, waits for each prompt and types, and returns all the terminal showed.
 */

interface Step { expect: string, send: string }
interface Terminal { output: string, code: number | null }

async function atTerminal (argv: string[], env: Record<string, string>, steps: Step[]): Promise<Terminal> {
  const spec = {
    argv,
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TERM: 'dumb', JWT_SECRET: TEST_SECRET, ARGON2_MEMORY_COST: '1024', ARGON2_TIME_COST: '1', ...env },
    steps,
    timeout: 60
  }
  const { stdout } = await promisify(execFile)('python3', [join(import.meta.dirname, 'terminal.py'), JSON.stringify(spec)], { maxBuffer: 1 << 20 })
  return JSON.parse(stdout) as Terminal
}

const CLI = [process.execPath, ...TSX, 'src/cli.ts']
const typed = (password: string): Step[] => [
  { expect: 'Password: ', send: `${password}\r` },
  { expect: 'Repeat the password: ', send: `${password}\r` }
]

t.test('user create at a terminal reads the password without echo, asked twice, and the account signs in with it', async (t) => {
  const dataDir = tempDir(t)
  const run = await atTerminal([...CLI, 'user', 'create', '--email', 'tty@example.com', '--name', 'Tee'], await databaseEnv(t, dataDir), typed(CLI_PASSWORD))
  t.equal(run.code, 0, run.output)
  t.match(run.output, /^Password: \r?\nRepeat the password: \r?\ncreated user [0-9a-f-]{36} <tty@example\.com>\r?\n$/, 'prompts and the result, nothing else')
  t.notOk(run.output.includes(CLI_PASSWORD), 'the password never appears on the terminal')
  t.notOk(run.output.includes('*'), 'not even as stars, which would tell its length')
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal((await login(app, { email: 'tty@example.com', password: CLI_PASSWORD })).response.statusCode, 200)
})

t.test('user set-password at a terminal: Backspace corrects, two different entries are refused', async (t) => {
  const dataDir = tempDir(t)
  const env = await databaseEnv(t, dataDir)
  const created = await atTerminal([...CLI, 'user', 'create', '--email', 'bo@example.com', '--name', 'Bo'], env, typed(CLI_PASSWORD))
  t.equal(created.code, 0, created.output)

  const mismatch = await atTerminal([...CLI, 'user', 'set-password', 'bo@example.com'], env, [
    { expect: 'Password: ', send: 'First-Secret-1\r' },
    { expect: 'Repeat the password: ', send: 'Other-Secret-2\r' }
  ])
  t.equal(mismatch.code, 1)
  t.match(mismatch.output, /gatehouse: the passwords typed do not match\r?\n$/)

  const corrected = await atTerminal([...CLI, 'user', 'set-password', 'bo@example.com'], env, [
    { expect: 'Password: ', send: 'New-Secret-99X\u007f\r' },
    { expect: 'Repeat the password: ', send: 'New-Secret-99\r' }
  ])
  t.equal(corrected.code, 0, corrected.output)
  t.match(corrected.output, /password set for bo@example\.com; 0 sessions revoked/)
  t.notOk(corrected.output.includes('New-Secret'), 'no echo')
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal((await login(app, { email: 'bo@example.com', password: 'New-Secret-99' })).response.statusCode, 200, 'Backspace took the X back')
})

t.test('the negative control: reading the terminal as a pipe (the old way) echoes what is typed', async (t) => {
  const read = 'let s = ""; process.stdout.write("ready\\n"); for await (const c of process.stdin) s += c; console.log("read", s.length)'
  const run = await atTerminal([process.execPath, '--input-type=module', '-e', read], {}, [
    { expect: 'ready', send: `${CLI_PASSWORD}\r` },
    { expect: CLI_PASSWORD, send: '\u0004' }
  ])
  t.equal(run.code, 0, run.output)
  t.ok(run.output.includes(CLI_PASSWORD), 'the terminal showed the password')
})
