import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { sql } from 'kysely'
import { authHeader, buildFrom, databaseEnv, rawSql, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { ISO, REVOKED, UUID } from '../patterns.js'
import { cli, CLI_PASSWORD } from './cli-process.js'

/*
 * `gatehouse service-account create` and `gatehouse api-key create|list|revoke` as real processes
 * (src/cli/api-keys.ts, docs/api-keys.md#the-command-line): the key printed once, the exit codes, and
 * a revocation made by the command line refused by a running server within a second.
 */

const KEY = /^gh_[0-9a-z]{12}_[0-9A-Za-z]{38}$/

t.test('service-account create, api-key create, list and revoke', async (t) => {
  const dataDir = tempDir(t)
  const dek = `k1:${randomBytes(32).toString('base64')}`
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ENABLE_API_KEYS: 'true', DATA_ENCRYPTION_KEYS: dek }

  const created = await cli(['service-account', 'create', '--name', 'Backup Job', '--role', 'backup', '--json'], env)
  t.equal(created.code, 0, created.stderr)
  const account = JSON.parse(created.stdout) as Record<string, unknown>
  t.match(account.id, UUID)
  t.strictSame(account, {
    id: account.id,
    email: `backup-job.${String(account.id).slice(0, 8)}@service.invalid`,
    name: 'Backup Job',
    age: null,
    created_at: account.created_at,
    updated_at: account.created_at,
    roles: ['backup'],
    is_superuser: false,
    email_verified: false,
    kind: 'service'
  })

  const made = await cli(['api-key', 'create', '--user', String(account.email), '--name', 'nightly', '--expires-in', '7d'], env)
  t.equal(made.code, 0, made.stderr)
  const lines = made.stdout.trimEnd().split('\n')
  t.equal(lines.length, 2)
  t.match(lines[0], /^created API key [0-9a-z]{12} for backup-job\.[0-9a-f]{8}@service\.invalid \[backup\], expires \d{4}-.*; shown this once:$/)
  const key = lines[1] ?? ''
  t.match(key, KEY)
  const id = key.slice(3, 15)

  const json = await cli(['api-key', 'create', '--user', String(account.id), '--name', 'second', '--json'], env)
  t.equal(json.code, 0, json.stderr)
  const second = JSON.parse(json.stdout) as Record<string, unknown>
  t.match(second.key, KEY)
  t.match(second.expires_at, ISO)
  t.strictSame(Object.keys(second).sort(), ['created_at', 'expires_at', 'id', 'key', 'last_used_at', 'name', 'roles'])

  const list = await cli(['api-key', 'list', '--user', String(account.email)], env)
  t.equal(list.code, 0, list.stderr)
  t.match(list.stdout, new RegExp(`^${String(second.id)}  second  \\[backup\\]  expires .*  last used never\n${id}  nightly  \\[backup\\]  expires .*  last used never\n2 keys\n$`))
  t.notOk(list.stdout.includes(key.slice(16)), 'never a key')

  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ENABLE_API_KEYS: true, DATA_ENCRYPTION_KEYS: dek, REVOCATION_POLL_MS: 100 }))
  const path = `/api/users/${String(account.id)}`
  t.equal((await app.inject({ method: 'GET', url: path, headers: authHeader(key) })).statusCode, 200, 'the printed key works')
  const revoked = await cli(['api-key', 'revoke', id], env)
  t.equal(revoked.code, 0, revoked.stderr)
  t.equal(revoked.stdout, `revoked API key ${id}\n`)
  const started = Date.now()
  let res = await app.inject({ method: 'GET', url: path, headers: authHeader(key) })
  while (res.statusCode === 200 && Date.now() - started < 1000) {
    await sleep(20)
    res = await app.inject({ method: 'GET', url: path, headers: authHeader(key) })
  }
  t.same([res.statusCode, res.json()], [401, REVOKED], `the running server refused it after ${Date.now() - started} ms`)
  const again = await cli(['api-key', 'revoke', id], env)
  t.same([again.code, again.stderr], [1, 'gatehouse: API key not found\n'])
  const audited = await rawSql<{ actor_id: string | null, user_id: string, detail: string }>(app.config, sql`select actor_id, user_id, detail from audit_events where event = 'api_key_revoked'`)
  t.same(audited, [{ actor_id: null, user_id: account.id, detail: `revoked_by_operator: key ${id}` }], 'audited as the operator\'s revocation')
})

t.test('api-key create takes some of the account\'s roles; a role beyond them exits 1 naming it, and so does --expires-in past API_KEY_MAX_TTL', async (t) => {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ENABLE_API_KEYS: 'true', DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`, API_KEY_MAX_TTL: '30d' }
  const created = await cli(['service-account', 'create', '--name', 'Reports', '--role', 'backup', '--role', 'reports', '--json'], env)
  t.equal(created.code, 0, created.stderr)
  const { email } = JSON.parse(created.stdout) as { email: string }
  const subset = await cli(['api-key', 'create', '--user', email, '--name', 'backup only', '--role', 'backup', '--json'], env)
  t.equal(subset.code, 0, subset.stderr)
  t.same((JSON.parse(subset.stdout) as { roles: string[] }).roles, ['backup'])
  const beyond = await cli(['api-key', 'create', '--user', email, '--name', 'x', '--role', 'backup', '--role', 'admin'], env)
  t.same([beyond.code, beyond.stderr, beyond.stdout], [1, 'gatehouse: You are not allowed to perform this action (missing_role): the account does not hold admin\n', ''])
  const tooLong = await cli(['api-key', 'create', '--user', email, '--name', 'x', '--expires-in', '31d'], env)
  t.equal(tooLong.code, 1)
  t.match(tooLong.stderr, /^gatehouse: --expires-in: The expires_at field must not exceed \d{4}-\d{2}-\d{2}T[\d:.]+Z\n$/)
  const longest = await cli(['api-key', 'create', '--user', email, '--name', 'x', '--expires-in', '30d'], env)
  t.equal(longest.code, 0, 'the negative control: API_KEY_MAX_TTL itself is allowed')
  const listed = await cli(['api-key', 'list', '--user', email, '--json'], env)
  t.same((JSON.parse(listed.stdout) as { data: Array<{ name: string }> }).data.map((k) => k.name), ['x', 'backup only'], 'the refused ones made no key')
})

t.test('user set-password ends the user\'s sessions and leaves their API keys alone', async (t) => {
  const dataDir = tempDir(t)
  const dek = `k1:${randomBytes(32).toString('base64')}`
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ENABLE_API_KEYS: 'true', DATA_ENCRYPTION_KEYS: dek }
  const made = await cli(['user', 'create', '--email', 'kim@example.com', '--name', 'Kim'], env, `${CLI_PASSWORD}\n`)
  t.equal(made.code, 0, made.stderr)
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ENABLE_API_KEYS: true, DATA_ENCRYPTION_KEYS: dek, REVOCATION_POLL_MS: 100 }))
  const signedIn = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'kim@example.com', password: CLI_PASSWORD } })
  const { access_token: token, user } = signedIn.json() as { access_token: string, user: { id: string } }
  const created = await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload: { name: 'laptop' } })
  const { key } = created.json() as { key: string }
  const path = `/api/users/${user.id}`
  t.equal((await app.inject({ method: 'GET', url: path, headers: authHeader(key) })).statusCode, 200)

  const set = await cli(['user', 'set-password', 'kim@example.com'], env, 'Another-Cli-Pass-7!\n')
  t.equal(set.code, 0, set.stderr)
  const started = Date.now()
  let session = await app.inject({ method: 'GET', url: path, headers: authHeader(token) })
  while (session.statusCode === 200 && Date.now() - started < 1000) {
    await sleep(20)
    session = await app.inject({ method: 'GET', url: path, headers: authHeader(token) })
  }
  t.same([session.statusCode, session.json()], [401, REVOKED], 'the negative control: the session signed in before it ended')
  t.equal((await app.inject({ method: 'GET', url: path, headers: authHeader(key) })).statusCode, 200, 'the key works on')
})

t.test('bad arguments exit 2, refused operations 1, and with API keys off the commands say so', async (t) => {
  const dataDir = tempDir(t)
  const base = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET }
  const env = { ...base, ENABLE_API_KEYS: 'true', DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` }
  const person = await cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann'], env, 'Cli-Pass-123!\n')
  t.equal(person.code, 0, person.stderr)
  const refused = await cli(['api-key', 'create', '--user', 'ann@example.com', '--name', 'x'], env)
  t.same([refused.code, refused.stderr], [1, 'gatehouse: API keys are created for service accounts only\n'])
  const badTtl = await cli(['api-key', 'create', '--user', 'ann@example.com', '--name', 'x', '--expires-in', 'soon'], env)
  t.equal(badTtl.code, 2)
  t.match(badTtl.stderr, /^gatehouse: --expires-in is a duration/)
  const badId = await cli(['api-key', 'revoke', 'NOT-AN-ID'], env)
  t.equal(badId.code, 2)
  const missing = await cli(['service-account', 'create'], env)
  t.same([missing.code, missing.stderr.split('\n')[0]], [2, 'gatehouse: --name is required'])
  const off = await cli(['api-key', 'list', '--user', 'ann@example.com'], base)
  t.same([off.code, off.stderr], [1, 'gatehouse: API keys are off: set ENABLE_API_KEYS=true\n'])
  const help = await cli(['api-key', '--help'], base)
  t.equal(help.code, 0)
  t.match(help.stdout, /gatehouse api-key create --user <email\|id> --name <name> \[--role <role>\]\.\.\. \[--expires-in <duration>\]/)
})
