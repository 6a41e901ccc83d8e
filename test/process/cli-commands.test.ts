import t, { type Test } from 'tap'
import { buildFrom, databaseEnv, login, STORE_KIND, TEST_SECRET, tempDir, testConfig, type TestContext } from '../helper.js'
import { ISO, UUID } from '../patterns.js'
import { main } from '../../src/cli/main.js'
import { cli, CLI_PASSWORD } from './cli-process.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'
import { startServer } from './server-process.js'

/*
 * Every command of the command line as a real process (docs/operations.md#the-command-line): its
 * text and --json output, its exit codes (0, 2 for a bad argument, 1 for a failed operation), and
 * a change it makes reaching a running server within a second.
 */

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** The CLI's own main(), with its output captured: for the answers that need no database. */
async function inProcess (args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { out: (text) => { stdout += text }, err: (text) => { stderr += text } })
  return { code, stdout, stderr }
}

async function envFor (t: TestContext, dataDir: string): Promise<Record<string, string>> {
  return { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET }
}

/** A user made by the CLI and signed in twice through an app on the same database. */
async function seeded (t: Test) {
  const dataDir = tempDir(t)
  const env = await envFor(t, dataDir)
  const created = await cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann', '--role', 'editor', '--json'], env, CLI_PASSWORD + '\n')
  t.equal(created.code, 0, created.stderr)
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  const sessions = [await login(app, { email: 'ann@example.com', password: CLI_PASSWORD }), await login(app, { email: 'ann@example.com', password: CLI_PASSWORD })]
  return { dataDir, env, app, user: JSON.parse(created.stdout) as Record<string, unknown>, sessions }
}

t.test('user create, list and show print text, and --json the API\'s UserResponse', async (t) => {
  const { env, user } = await seeded(t)
  t.match(user.id, UUID)
  t.match(user.created_at, ISO)
  t.strictSame(user, { id: user.id, email: 'ann@example.com', name: 'Ann', age: null, created_at: user.created_at, updated_at: user.created_at, roles: ['editor'], is_superuser: false, email_verified: false })

  const list = await cli(['user', 'list'], env)
  t.equal(list.code, 0, list.stderr)
  t.equal(list.stdout, `${String(user.id)}  ann@example.com  Ann  [editor]\npage 1 of 1, 1 user\n`)
  const listJson = await cli(['user', 'list', '--per-page', '5', '--json'], env)
  t.strictSame(JSON.parse(listJson.stdout), { data: [user], pagination: { current_page: 1, per_page: 5, total: 1, last_page: 1, from: 1, to: 5 } })

  const show = await cli(['user', 'show', 'ANN@example.com'], env)
  t.equal(show.code, 0, show.stderr)
  t.equal(show.stdout, `id: ${String(user.id)}\nemail: ann@example.com\nname: Ann\nage: -\nroles: editor\nsuperuser: false\ncreated: ${String(user.created_at)}\nupdated: ${String(user.updated_at)}\n`)
  const byId = await cli(['user', 'show', '--json', String(user.id)], env)
  t.strictSame(JSON.parse(byId.stdout), user, 'by id, --json before the argument')

  const unknown = await cli(['user', 'show', 'nobody@example.com'], env)
  t.equal(unknown.code, 1)
  t.equal(unknown.stdout, '')
  t.equal(unknown.stderr, 'gatehouse: no user nobody@example.com\n')
})

t.test('sessions list and revoke: text and --json, never a token; the sessions end', async (t) => {
  const { env, app, user, sessions } = await seeded(t)
  const listed = await cli(['sessions', 'list', '--user', 'ann@example.com', '--json'], env)
  t.equal(listed.code, 0, listed.stderr)
  const { data } = JSON.parse(listed.stdout) as { data: Array<Record<string, unknown>> }
  t.equal(data.length, 2)
  for (const s of data) t.strictSame(Object.keys(s), ['id', 'current', 'created_at', 'last_used_at', 'expires_at', 'ip', 'user_agent', 'aal', 'amr'])
  t.strictSame(data.map((s) => [s.current, s.ip, s.user_agent, s.aal, s.amr]), [[false, '127.0.0.1', 'lightMyRequest', 'aal1', ['pwd']], [false, '127.0.0.1', 'lightMyRequest', 'aal1', ['pwd']]])
  for (const s of sessions) {
    t.notOk(listed.stdout.includes(s.access_token) || listed.stdout.includes(s.refresh_token), 'no token')
  }
  const text = await cli(['sessions', 'list', '--user', String(user.id)], env)
  t.equal(text.stdout, data.map((s) => `${String(s.id)}  signed in ${String(s.created_at)}  last used ${String(s.last_used_at)}  127.0.0.1  aal1  lightMyRequest\n`).join(''))

  const revoked = await cli(['sessions', 'revoke', '--user', 'ann@example.com'], env)
  t.equal(revoked.code, 0, revoked.stderr)
  t.equal(revoked.stdout, 'revoked 2 sessions of ann@example.com\n')
  const again = await cli(['sessions', 'revoke', '--json', '--user', 'ann@example.com'], env)
  t.equal(again.stdout, '{"revoked":0}\n')
  const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: sessions[0]?.refresh_token } })
  t.equal(refresh.statusCode, 401, 'the revoked session cannot refresh')
  t.equal((await cli(['sessions', 'list', '--user', 'ann@example.com'], env)).stdout, 'ann@example.com has no live session\n')
})

t.test('user set-roles, set-password and delete: output, sessions ended, audit events as the API writes them', async (t) => {
  const { env, app, user, sessions } = await seeded(t)
  const roles = await cli(['user', 'set-roles', 'ann@example.com', '--role', 'user', '--role', 'admin', '--json'], env)
  t.equal(roles.code, 0, roles.stderr)
  const updated = JSON.parse(roles.stdout)
  t.strictSame(updated, { ...user, roles: ['user', 'admin'], updated_at: updated.updated_at })
  t.equal((await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: sessions[0]?.refresh_token } })).statusCode, 401, 'editor taken away: sessions ended, as through the API')
  const text = await cli(['user', 'set-roles', 'ann@example.com', '--role', 'admin'], env)
  t.equal(text.stdout, 'roles of ann@example.com: admin\n')

  const again = await login(app, { email: 'ann@example.com', password: CLI_PASSWORD })
  const password = await cli(['user', 'set-password', 'ann@example.com'], env, 'Brand-New-Pass-1\n')
  t.equal(password.code, 0, password.stderr)
  t.equal(password.stdout, 'password set for ann@example.com; 1 session revoked\n')
  t.equal((await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: again.refresh_token } })).statusCode, 401)
  const fresh = await login(app, { email: 'ann@example.com', password: 'Brand-New-Pass-1' })
  t.ok(fresh.access_token, 'the new password signs in')
  const json = await cli(['user', 'set-password', String(user.id), '--json'], env, 'Another-Pass-2\n')
  t.strictSame(JSON.parse(json.stdout), { id: user.id, email: 'ann@example.com', revoked: 1 })
  const short = await cli(['user', 'set-password', 'ann@example.com'], env, 'short\n')
  t.equal(short.code, 1)
  t.equal(short.stderr, 'gatehouse: the password (stdin) must be 8 to 1024 characters\n')

  const { entries } = await app.auditTrail.page({ userId: String(user.id) }, 1, 50)
  const trail = entries.filter((e) => e.address === 'cli').map((e) => [e.event, e.actorId, e.detail]).reverse()
  t.strictSame(trail, [
    ['user_created', null, 'roles: [editor]; is_superuser: false'],
    ['sessions_revoked', null, 'grant_removed: 2'],
    ['grants_changed', null, 'roles: [editor] -> [user,admin]'],
    ['grants_changed', null, 'roles: [user,admin] -> [admin]'],
    ['sessions_revoked', null, 'password_set: 1'],
    ['password_changed', null, 'set without the current password'],
    ['sessions_revoked', null, 'password_set: 1'],
    ['password_changed', null, 'set without the current password']
  ])

  const deleted = await cli(['user', 'delete', 'ann@example.com', '--json'], env)
  t.equal(deleted.code, 0, deleted.stderr)
  t.strictSame(JSON.parse(deleted.stdout), { deleted: user.id })
  t.equal((await cli(['user', 'delete', 'ann@example.com'], env)).stderr, 'gatehouse: no user ann@example.com\n')
})

t.test('--help on every command prints its usage and exits 0; bad arguments exit 2 with a usage line', async (t) => {
  // the real process once each way; every command then through the same main() in this process,
  // as a spawn through tsx costs a second or two and none of these opens the database
  const env = { DATA_DIR: tempDir(t) }
  const help = await cli(['user', 'show', '--help'], env)
  t.strictSame(help, { code: 0, stdout: (await inProcess(['user', 'show', '--help'])).stdout, stderr: '' }, 'a real process prints what main() does')
  const usage = await cli(['user', 'show'], env)
  t.strictSame(usage, { code: 2, stdout: '', stderr: 'gatehouse: missing <email|id>\nusage: gatehouse user show <email|id>\n' })
  const commands = [['migrate'], ['user', 'create'], ['user', 'list'], ['user', 'show'], ['user', 'set-password'], ['user', 'set-roles'], ['user', 'delete'], ['sessions', 'list'], ['sessions', 'revoke'], ['keys', 'list'], ['keys', 'rotate'], ['keys', 'revoke'], ['mail', 'test']]
  // one at a time: a few processes at once on a loaded machine are slow enough to time out
  for (const command of commands) {
    const run = await inProcess([...command, '--help'])
    const name = command.join(' ')
    t.equal(run.code, 0, `${name} --help`)
    t.match(run.stdout, new RegExp(`^usage: gatehouse ${name}`), name)
    t.equal(run.stderr, '')
  }
  const bad: Array<[string[], string]> = [
    [['user', 'show'], 'gatehouse: missing <email|id>\nusage: gatehouse user show <email|id>\n'],
    [['user', 'show', 'a@b.io', 'extra'], 'gatehouse: unexpected argument: extra\nusage: gatehouse user show <email|id>\n'],
    [['user', 'list', '--per-page', '101'], 'gatehouse: --per-page must be an integer from 1 to 100\nusage: gatehouse user list [--page <n>] [--per-page <n>]\n'],
    [['sessions', 'revoke'], 'gatehouse: --user is required\nusage: gatehouse sessions revoke --user <email|id>\n'],
    [['user', 'set-roles', 'a@b.io', '--role', 'Not A Role'], 'gatehouse: --role Not A Role is not a role name (lower-case letters, digits, _ and -; at most 32)\nusage: gatehouse user set-roles <email|id> --role <role>...\n']
  ]
  for (const [args, stderr] of bad) {
    const run = await inProcess(args)
    t.equal(run.code, 2, args.join(' '))
    t.equal(run.stdout, '')
    t.equal(run.stderr, stderr)
  }
  const unknownOption = await inProcess(['user', 'list', '--bogus'])
  t.equal(unknownOption.code, 2)
  t.match(unknownOption.stderr, /^gatehouse: Unknown option '--bogus'.*\nusage: gatehouse user list/)
  const unknownCommand = await inProcess(['user', 'promote'])
  t.equal(unknownCommand.code, 2)
  t.match(unknownCommand.stderr, /^gatehouse: unknown command promote, a user command\nUsage:\n/)
})

t.test('a database that cannot be reached exits 1 with one line naming it, password hidden', async (t) => {
  const run = await cli(['user', 'list'], { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, DATABASE_URL: 'postgres://gatehouse:s3cret@127.0.0.1:1/nowhere' })
  t.equal(run.code, 1)
  t.equal(run.stdout, '')
  t.equal(run.stderr, 'gatehouse: database postgres://gatehouse:***@127.0.0.1:1/nowhere unreachable: connect ECONNREFUSED 127.0.0.1:1\n')
})

/** ms from now until `check` answers `refused`, or Infinity past two seconds */
async function refusedWithin (check: () => Promise<number>, refused: number): Promise<number> {
  const start = Date.now()
  while (Date.now() - start < 2000) {
    if (await check() === refused) return Date.now() - start
    await sleep(20)
  }
  return Infinity
}

/** A real server on the CLI's database, stopped at teardown, and calls to it as bo@example.com. */
async function runningServer (t: Test, env: Record<string, string>) {
  const server = startServer({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ARGON2_MEMORY_COST: '1024', ARGON2_TIME_COST: '1' })
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    await server.exited
  })
  const origin = (await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/))[1] ?? ''
  for (let waited = 0; (await fetch(`${origin}/health`)).status !== 200 && waited < 10_000; waited += 100) await sleep(100)
  return {
    signIn: async () => (await (await fetch(`${origin}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bo@example.com', password: CLI_PASSWORD }) })).json()) as { access_token: string },
    me: async (token: string) => (await fetch(`${origin}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status,
    users: async (token: string) => (await fetch(`${origin}/api/users`, { headers: { authorization: `Bearer ${token}` } })).status
  }
}

t.test('a session revoked and a role removed by the CLI are refused by a running server within one second', async (t) => {
  const dataDir = tempDir(t)
  const env = await envFor(t, dataDir)
  t.equal((await cli(['user', 'create', '--email', 'bo@example.com', '--name', 'Bo', '--role', 'admin'], env, CLI_PASSWORD)).code, 0)
  // a lone server with the defaults (no REVOCATION_POLL_MS, no Redis): SQLite in the first pass
  const { signIn, me, users } = await runningServer(t, env)

  const first = await signIn()
  t.equal(await me(first.access_token), 200)
  const revoke = await cli(['sessions', 'revoke', '--user', 'bo@example.com'], env)
  t.equal(revoke.stdout, 'revoked 1 session of bo@example.com\n')
  const revokedAfter = await refusedWithin(async () => await me(first.access_token), 401)
  t.ok(revokedAfter <= 1000, `the revoked session is refused ${revokedAfter} ms after the CLI exited (${STORE_KIND})`)

  const second = await signIn()
  t.equal(await users(second.access_token), 200, 'an admin lists users')
  t.equal((await cli(['user', 'set-roles', 'bo@example.com', '--role', 'user'], env)).code, 0)
  const demotedAfter = await refusedWithin(async () => await users(second.access_token), 401)
  t.ok(demotedAfter <= 1000, `the demoted admin's token is refused ${demotedAfter} ms after the CLI exited`)
  // the negative control: a fresh sign-in works, as a user, and is no admin
  const third = await signIn()
  t.equal(await me(third.access_token), 200)
  t.equal(await users(third.access_token), 403)
})

t.test('with REDIS_URL the CLI broadcasts its revocations: a server that does not poll refuses within one second', async (t) => {
  const dataDir = tempDir(t)
  const env = await envFor(t, dataDir)
  t.equal((await cli(['user', 'create', '--email', 'bo@example.com', '--name', 'Bo'], env, CLI_PASSWORD)).code, 0)
  const redis = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t) }
  // subscribed to Redis and never polling: only the broadcast can tell it
  const { signIn, me } = await runningServer(t, { ...env, ...redis, REVOCATION_POLL_MS: '0' })

  // the negative control: a CLI without REDIS_URL only writes the database, which this server does not read
  const unheard = await signIn()
  t.equal((await cli(['sessions', 'revoke', '--user', 'bo@example.com'], env)).code, 0)
  await sleep(1500)
  t.equal(await me(unheard.access_token), 200, 'not broadcast, not heard')

  const heard = await signIn()
  t.equal((await cli(['sessions', 'revoke', '--user', 'bo@example.com'], { ...env, ...redis })).stdout, 'revoked 1 session of bo@example.com\n')
  const after = await refusedWithin(async () => await me(heard.access_token), 401)
  t.ok(after <= 1000, `refused ${after} ms after the CLI exited`)
})
