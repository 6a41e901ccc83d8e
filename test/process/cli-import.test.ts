import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { buildFrom, databaseEnv, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { UUID } from '../patterns.js'
import { argon2Cli, htpasswdBcrypt, pythonHash } from '../src/crypto/foreign-hashes.js'
import { cli } from './cli-process.js'

/*
 * `gatehouse user import` (src/cli/import.ts) as a real process on a file the test writes: line
 * numbers in its refusals, exit 0 (all imported, or would be), 1 (any refused), 2 (usage),
 * --json, --dry-run and --partial, and the users signing in through a server on the same database.
 */

const PASSWORD = 'Legacy-Pass-1'

async function setup (t: Test, lines: string[]) {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET }
  const file = join(dataDir, 'users.jsonl')
  writeFileSync(file, lines.join('\n'))
  return { dataDir, env, file }
}

const line = (fields: Record<string, unknown>) => JSON.stringify(fields)

t.test('a file of hashes from htpasswd, the argon2 command and Django imports whole, and each user signs in', async (t) => {
  const hashes = [await htpasswdBcrypt(PASSWORD, 4), await argon2Cli(PASSWORD, { type: 'id', memoryKiB: 1024, time: 2, lanes: 1 }), await pythonHash(PASSWORD, { kind: 'django', rounds: 1000 })]
  const { dataDir, env, file } = await setup(t, [...hashes.map((hash, i) => line({ email: `u${i}@example.com`, name: `User ${i}`, password_hash: hash })), '', '   ', ''])
  const res = await cli(['user', 'import', '--file', file], env)
  t.equal(res.code, 0, res.stderr)
  t.equal(res.stdout, 'imported 3 users\n')
  t.equal(res.stderr, '')
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  for (const i of [0, 1, 2]) {
    const ok = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: `u${i}@example.com`, password: PASSWORD } })
    t.equal(ok.statusCode, 200, `user ${i} signs in`)
    const wrong = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: `u${i}@example.com`, password: `${PASSWORD}!` } })
    t.equal(wrong.statusCode, 401)
  }
  const { entries } = await app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.same(entries.map((e) => [e.address, e.actorId, e.detail]), [['cli', null, 'created 3']])
})

const MIXED = [
  line({ email: 'ok1@example.com', name: 'Fine One' }),
  '{"email": "broken@example.com", ',
  '',
  line({ email: 'bad', name: 'X', password_hash: '$2b$17$' + 'a'.repeat(53) }),
  line({ email: 'ok2@example.com', name: 'Fine Two', password: 'Plain-Pass-1' }),
  line({ email: 'OK1@example.com', name: 'Twice Here', role: 'admin' })
]
const MIXED_REFUSALS = [
  /^line 2: The line is not valid JSON \(.+\)$/,
  /^line 4: The email field must be a valid email address$/,
  /^line 4: The name field must be at least 2 characters$/,
  /^line 4: The password_hash field has parameters out of range \(bcrypt cost 17 > 16\)$/,
  /^line 6: The email field is already taken$/,
  /^line 6: The role field is invalid$/
]

t.test('any refused line: exit 1, every refusal on stderr by its line in the file, nothing written; --dry-run answers the same', async (t) => {
  const { dataDir, env, file } = await setup(t, MIXED)
  for (const args of [[], ['--dry-run']]) {
    const res = await cli(['user', 'import', '--file', file, ...args], env)
    t.equal(res.code, 1, args.join(' '))
    t.equal(res.stdout, `nothing ${args.length > 0 ? 'would be ' : ''}imported: 3 lines of 5 refused\n`)
    const refusals = res.stderr.trimEnd().split('\n')
    t.equal(refusals.length, MIXED_REFUSALS.length, res.stderr)
    MIXED_REFUSALS.forEach((pattern, i) => t.match(refusals[i], pattern))
  }
  const json = await cli(['user', 'import', '--file', file, '--json'], env)
  t.equal(json.code, 1)
  const body = JSON.parse(json.stdout)
  t.same({ ...body, results: body.results.map((r: Record<string, unknown>) => Object.keys(r)) }, { created: 0, refused: 3, results: [['line', 'id'], ['line', 'errors'], ['line', 'errors'], ['line', 'id'], ['line', 'errors']] })
  t.same(body.results[2], { line: 4, errors: { email: ['The email field must be a valid email address'], name: ['The name field must be at least 2 characters'], password_hash: ['The password_hash field has parameters out of range (bcrypt cost 17 > 16)'] } })
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(await app.store.users.count(), 0)
})

t.test('--partial imports the valid lines and exits 1 for the refused ones; --json lists each line', async (t) => {
  const { dataDir, env, file } = await setup(t, MIXED)
  const dry = await cli(['user', 'import', '--file', file, '--partial', '--dry-run'], env)
  t.equal(dry.code, 1)
  t.equal(dry.stdout, 'would import 2 users; 3 lines refused\n')
  const res = await cli(['user', 'import', '--file', file, '--partial', '--json'], env)
  t.equal(res.code, 1, res.stderr)
  const body = JSON.parse(res.stdout)
  t.equal(body.created, 2)
  t.equal(body.refused, 3)
  t.match(body.results[0], { line: 1, id: UUID })
  t.match(body.results[3], { line: 5, id: UUID })
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(await app.store.users.count(), 2)
  const signIn = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ok2@example.com', password: 'Plain-Pass-1' } })
  t.equal(signIn.statusCode, 200, 'the plain password was hashed at import')
})

t.test('usage: no --file is exit 2, an unreadable or empty file exit 1', async (t) => {
  const { env, dataDir } = await setup(t, [])
  const missing = await cli(['user', 'import'], env)
  t.equal(missing.code, 2)
  t.equal(missing.stderr, 'gatehouse: --file is required\nusage: gatehouse user import --file <users.jsonl> [--dry-run] [--partial]\n')
  const unreadable = await cli(['user', 'import', '--file', join(dataDir, 'nope.jsonl')], env)
  t.equal(unreadable.code, 1)
  t.match(unreadable.stderr, /^gatehouse: cannot read .*nope\.jsonl: ENOENT/)
  const empty = await cli(['user', 'import', '--file', join(dataDir, 'users.jsonl')], env)
  t.equal(empty.code, 1)
  t.match(empty.stderr, /users\.jsonl holds no users\n$/)
})

t.test('--dry-run on a file with no refused line exits 0 and writes nothing; --partial with nothing refused exits 0', async (t) => {
  const { dataDir, env, file } = await setup(t, [1, 2, 3].map((i) => line({ email: `fine${i}@example.com`, name: `Fine ${i}`, password: 'Plain-Pass-1' })))
  t.strictSame(await cli(['user', 'import', '--file', file, '--dry-run'], env), { code: 0, stdout: 'would import 3 users\n', stderr: '' })
  const before = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(await before.store.users.count(), 0, 'the dry run wrote no user')
  t.same((await before.auditTrail.page({ event: 'users_imported' }, 1, 10)).entries, [], 'and no users_imported event')
  await before.close()
  t.strictSame(await cli(['user', 'import', '--file', file, '--partial'], env), { code: 0, stdout: 'imported 3 users\n', stderr: '' })
  const after = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(await after.store.users.count(), 3)
  t.same((await after.auditTrail.page({ event: 'users_imported' }, 1, 10)).entries.map((e) => e.detail), ['created 3 (partial)'])
})

t.test('--partial writes one transaction per 1000 valid lines: 2,100 lines with one refused near the end are three users_imported events', async (t) => {
  // one cheap bcrypt hash (cost 4) for every line: the import checks its form, and the sign-in below verifies it
  const hash = await htpasswdBcrypt(PASSWORD, 4)
  const lines = Array.from({ length: 2100 }, (_, i) => line({ email: i === 2089 ? 'not-an-email' : `bulk${i}@example.com`, name: `Bulk ${i}`, password_hash: hash }))
  const { dataDir, env, file } = await setup(t, lines)
  const res = await cli(['user', 'import', '--file', file, '--partial'], env)
  t.strictSame(res, { code: 1, stdout: 'imported 2099 users; 1 line refused\n', stderr: 'line 2090: The email field must be a valid email address\n' })
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(await app.store.users.count(), 2099)
  const { entries } = await app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.same(entries.map((e) => e.detail).sort(), ['created 1000 (partial)', 'created 1000 (partial)', 'created 99 (partial)'], 'one event per transaction: 1000, 1000, then the 99 left')
  const signIn = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'bulk2099@example.com', password: PASSWORD } })
  t.equal(signIn.statusCode, 200, 'a user of the last batch signs in')
})
