import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { databaseEnv, TEST_SECRET, tempDir } from '../helper.js'
import { BREACHED, blocklistFile, FRESH } from './blocklist-file.js'
import { cli } from './cli-process.js'
import { startServer } from './server-process.js'

/*
 * The breached-password blocklist end to end (docs/breached-passwords.md): `gatehouse passwords
 * build-blocklist` (src/cli/passwords.ts) as a real process, the server started with
 * BREACHED_PASSWORDS_FILE (or refusing to start on a bad one), and `gatehouse user set-password`,
 * `user create` and `user import` refusing a listed password.
 */

const sha1 = (p: string) => createHash('sha1').update(p, 'utf8').digest('hex').toUpperCase()
const header = (count: number) => Buffer.concat([Buffer.from('GHBLOCK1'), Buffer.from(count.toString(16).padStart(16, '0'), 'hex')])
const USAGE = 'usage: gatehouse passwords build-blocklist --out <file> [--in <file>] [--format plain|sha1]\n'

t.test('build-blocklist reads --in or standard input, plain or sha1, with no setting and no database; text and --json', async (t) => {
  const dir = tempDir(t)
  const input = join(dir, 'rockyou.txt')
  writeFileSync(input, 'password\r\n123456\n\npassword\n')
  const plain = await cli(['passwords', 'build-blocklist', '--in', input, '--out', join(dir, 'plain.bin')], {})
  t.strictSame(plain, { code: 0, stdout: `wrote ${join(dir, 'plain.bin')}: 2 entries from 4 lines (1 skipped)\n`, stderr: '' })

  const hibp = await cli(['passwords', 'build-blocklist', '--format', 'sha1', '--out', join(dir, 'hibp.bin'), '--json'], {}, `${sha1('123456')}:37359195\r\n${sha1('password')}:9545824\r\n`)
  t.equal(hibp.code, 0, hibp.stderr)
  t.strictSame(JSON.parse(hibp.stdout), { file: join(dir, 'hibp.bin'), format: 'sha1', entries: 2, lines: 2, skipped: 0 })
  const bytes = readFileSync(join(dir, 'hibp.bin'))
  t.same(bytes, readFileSync(join(dir, 'plain.bin')), 'the same entries from either format')
  t.same(bytes, Buffer.concat([header(2), Buffer.from(sha1('password').slice(0, 16) + sha1('123456').slice(0, 16), 'hex')]), '5BAA… sorts before 7C4A…')
})

t.test('build-blocklist refuses bad arguments (exit 2) and a bad list or path (exit 1), writing nothing', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'list.bin')
  t.strictSame(await cli(['passwords', 'build-blocklist'], {}), { code: 2, stdout: '', stderr: `gatehouse: --out is required\n${USAGE}` })
  t.strictSame(await cli(['passwords', 'build-blocklist', '--out', out, '--format', 'md5'], {}), { code: 2, stdout: '', stderr: `gatehouse: --format must be plain or sha1\n${USAGE}` })
  t.strictSame(await cli(['passwords', 'build-blocklist', '--out', out, '--format', 'sha1'], {}, `${sha1('a')}\npassword\n`),
    { code: 1, stdout: '', stderr: 'gatehouse: standard input line 2: not a SHA-1 (40 hex digits, optionally :count); nothing was written\n' })
  t.strictSame(await cli(['passwords', 'build-blocklist', '--out', out, '--in', join(dir, 'missing.txt')], {}),
    { code: 1, stdout: '', stderr: `gatehouse: --in ${join(dir, 'missing.txt')} cannot be read (ENOENT)\n` })
  t.strictSame(await cli(['passwords', 'build-blocklist', '--out', join(dir, 'no', 'list.bin')], {}, 'password\n'),
    { code: 1, stdout: '', stderr: `gatehouse: --out ${join(dir, 'no', 'list.bin')} cannot be written (ENOENT)\n` })
  t.strictSame(readdirSync(dir), [], 'no file, no temporary')
})

t.test('a malformed BREACHED_PASSWORDS_FILE stops the server\'s start, naming the setting; a good one is searched on a real request', async (t) => {
  const dir = tempDir(t)
  const bad = join(dir, 'bad.bin')
  writeFileSync(bad, Buffer.concat([header(3), Buffer.alloc(16)]))
  const refused = startServer({ JWT_SECRET: TEST_SECRET, DATA_DIR: dir, PORT: '0', BREACHED_PASSWORDS_FILE: bad })
  t.teardown(() => { refused.child.kill('SIGKILL') })
  t.equal((await refused.exited).code, 1)
  t.equal(refused.stderr(), `gatehouse: Invalid configuration: BREACHED_PASSWORDS_FILE ${bad} is 32 bytes where its header's count of 3 entries needs 40\n`)
  t.notOk(existsSync(join(dir, 'gatehouse.db')), 'nothing was opened')

  const server = startServer({
    JWT_SECRET: TEST_SECRET,
    DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ENABLE_REGISTER: 'true',
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1',
    BREACHED_PASSWORDS_FILE: await blocklistFile(t, `${BREACHED}\n`)
  })
  t.teardown(async () => { server.child.kill('SIGTERM'); await server.exited })
  const origin = (await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1] ?? ''
  const register = async (password: string) => await fetch(`${origin}/auth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ann@example.com', name: 'Ann', password })
  })
  const res = await register(BREACHED)
  t.equal(res.status, 422)
  t.strictSame(await res.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { password: ['The password field is a known breached password'] } })
  t.equal((await register(FRESH)).status, 201)
})

t.test('user set-password and user create refuse a listed password (exit 1, nothing changed); without the setting it is taken', async (t) => {
  const dir = tempDir(t)
  const env = { ...await databaseEnv(t, dir), JWT_SECRET: TEST_SECRET }
  const listed = { ...env, BREACHED_PASSWORDS_FILE: await blocklistFile(t, `${BREACHED}\n`) }
  const REFUSED = { code: 1, stdout: '', stderr: 'gatehouse: the password (stdin) is a known breached password (BREACHED_PASSWORDS_FILE)\n' }

  t.strictSame(await cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann'], listed, `${BREACHED}\n`), REFUSED)
  t.equal((await cli(['user', 'show', 'ann@example.com'], listed)).code, 1, 'no user was created')
  const created = await cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann'], listed, `${FRESH}\n`)
  t.equal(created.code, 0, created.stderr)

  t.strictSame(await cli(['user', 'set-password', 'ann@example.com'], listed, `${BREACHED}\n`), REFUSED)
  const kept = await cli(['user', 'set-password', 'ann@example.com', '--json'], listed, `${FRESH}x\n`)
  t.equal(kept.code, 0, kept.stderr)
  t.equal(JSON.parse(kept.stdout).email, 'ann@example.com')
  const unlisted = await cli(['user', 'set-password', 'ann@example.com'], env, `${BREACHED}\n`)
  t.equal(unlisted.code, 0, `the negative control: ${unlisted.stderr}`)
})

t.test('user import refuses a line whose plain password is listed (exit 1, by its line, nothing written); without the setting it imports', async (t) => {
  const dir = tempDir(t)
  const env = { ...await databaseEnv(t, dir), JWT_SECRET: TEST_SECRET }
  const listed = { ...env, BREACHED_PASSWORDS_FILE: await blocklistFile(t, `${BREACHED}\n`) }
  const file = join(dir, 'users.jsonl')
  writeFileSync(file, `${JSON.stringify({ email: 'bea@example.com', name: 'Bea', password: BREACHED })}\n`)
  t.strictSame(await cli(['user', 'import', '--file', file], listed),
    { code: 1, stdout: 'nothing imported: 1 line of 1 refused\n', stderr: 'line 1: The password field is a known breached password\n' })
  t.equal((await cli(['user', 'show', 'bea@example.com'], listed)).code, 1, 'no user was imported')
  t.strictSame(await cli(['user', 'import', '--file', file], env), { code: 0, stdout: 'imported 1 user\n', stderr: '' }, 'the negative control: without the setting the line imports')
})
