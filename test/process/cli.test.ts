import { sql } from 'kysely'
import t from 'tap'
import { buildFrom, databaseEnv, login, rawSql, STORE_KIND, tempDir, testConfig, type TestContext } from '../helper.js'
import { cli, CLI_PASSWORD } from './cli-process.js'

/** The tables the migrations made, read from the database's own catalogue. */
async function tables (t: TestContext, dataDir: string): Promise<string[]> {
  const config = testConfig(t, { DATA_DIR: dataDir })
  const query = STORE_KIND === 'sqlite'
    // sqlite_* names are SQLite's own (sqlite_sequence keeps AUTOINCREMENT counters)
    ? sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'kysely%' and name not like 'sqlite%' order by name`
    : sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_name not like 'kysely%' order by name`
  return (await rawSql(config, query)).map((r) => r.name)
}

t.test('migrate applies the migrations, then reports the database is up to date', async (t) => {
  const dataDir = tempDir(t)
  const first = await cli(['migrate'], await databaseEnv(t, dataDir))
  t.equal(first.code, 0, first.stderr)
  t.equal(first.stdout, 'applied 0001_users_sessions_revocations, 0002_audit_events, 0003_users_credentials_version, 0004_sessions_access_expires_at, 0005_sessions_signed_in_at, 0006_audit_events_actor_outcome, 0007_revocation_sequence, 0008_signing_keys, 0009_mail_outbox, 0010_recovery, 0011_sessions_client, 0012_totp, 0013_passkeys, 0014_api_keys, 0016_oidc_clients, 0017_oidc_sessions, 0018_user_identities\n')
  t.same(await tables(t, dataDir), ['api_keys', 'audit_events', 'mail_outbox', 'mfa_challenges', 'oauth_clients', 'oauth_codes', 'oauth_grants', 'oauth_interactions', 'one_time_secrets', 'passkeys', 'recovery_codes', 'revocations', 'sessions', 'signing_keys', 'totp_factors', 'user_identities', 'users', 'webauthn_challenges', 'webauthn_user_handles'])

  const second = await cli(['migrate'], await databaseEnv(t, dataDir))
  t.equal(second.code, 0, second.stderr)
  t.equal(second.stdout, 'database is up to date\n')
})

t.test('user create makes an account, password from stdin, that can sign in', async (t) => {
  const dataDir = tempDir(t)
  const run = await cli(['user', 'create', '--email', 'A@B.io', '--name', 'Ann', '--role', 'admin', '--superuser'], await databaseEnv(t, dataDir), CLI_PASSWORD + '\n')
  t.equal(run.code, 0, run.stderr)
  const printed = /^created user ([0-9a-f-]{36}) <a@b\.io>\n$/.exec(run.stdout)
  t.ok(printed, run.stdout)

  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  const { response } = await login(app, { email: 'a@b.io', password: CLI_PASSWORD })
  const user = response.json().user
  t.same(user, {
    id: printed?.[1],
    email: 'a@b.io',
    name: 'Ann',
    age: null,
    roles: ['admin'],
    is_superuser: true,
    email_verified: false,
    created_at: user.created_at,
    updated_at: user.updated_at
  })
})

t.test('user create is an audit event: no actor, the address cli, the grants given', async (t) => {
  const dataDir = tempDir(t)
  const run = await cli(['user', 'create', '--email', 'root@example.com', '--name', 'Root', '--role', 'admin', '--superuser'], await databaseEnv(t, dataDir), CLI_PASSWORD)
  t.equal(run.code, 0, run.stderr)
  const id = /^created user ([0-9a-f-]{36}) /.exec(run.stdout)?.[1]

  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  const { access_token: token } = await login(app, { email: 'root@example.com', password: CLI_PASSWORD })
  const res = await app.inject({ method: 'GET', url: '/api/audit?event=user_created', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  const events = (res.json() as { data: Array<Record<string, unknown>> }).data.map(({ id: _id, at: _at, ...rest }) => rest)
  t.strictSame(events, [{
    event: 'user_created',
    outcome: 'success',
    actor_id: null,
    user_id: id,
    session_id: null,
    email: null,
    address: 'cli',
    detail: 'roles: [admin]; is_superuser: true'
  }])
})

t.test('user create without --role gives DEFAULT_ROLES and no superuser flag', async (t) => {
  const dataDir = tempDir(t)
  const run = await cli(['user', 'create', '--email', 'bob@example.com', '--name', 'Bob'], { ...await databaseEnv(t, dataDir), DEFAULT_ROLES: 'user,reader' }, CLI_PASSWORD)
  t.equal(run.code, 0, run.stderr)
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  const { response } = await login(app, { email: 'bob@example.com', password: CLI_PASSWORD })
  t.same(response.json().user.roles, ['user', 'reader'])
  t.equal(response.json().user.is_superuser, false)
})

t.test('user create with an email that exists exits 1 with a clear message', async (t) => {
  const dataDir = tempDir(t)
  const args = ['user', 'create', '--email', 'ann@example.com', '--name', 'Ann']
  t.equal((await cli(args, await databaseEnv(t, dataDir), CLI_PASSWORD)).code, 0)
  const again = await cli(['user', 'create', '--email', ' ANN@example.com ', '--name', 'Ann Two'], await databaseEnv(t, dataDir), CLI_PASSWORD)
  t.equal(again.code, 1)
  t.equal(again.stdout, '')
  t.match(again.stderr, /^gatehouse: The email has already been taken\n$/m)
})

t.test('user create refuses an email that is not an email address', async (t) => {
  const dataDir = tempDir(t)
  const run = await cli(['user', 'create', '--email', 'not-an-email', '--name', 'Ann'], await databaseEnv(t, dataDir), CLI_PASSWORD)
  t.equal(run.code, 2)
  t.equal(run.stdout, '')
  t.equal(run.stderr, 'gatehouse: --email must be a valid email address\nusage: gatehouse user create --email <email> --name <name> [--role <role>]... [--superuser]\n')
})

t.test('user create refuses a missing --name and a short password', async (t) => {
  const dataDir = tempDir(t)
  const noName = await cli(['user', 'create', '--email', 'ann@example.com'], await databaseEnv(t, dataDir), CLI_PASSWORD)
  t.equal(noName.code, 2)
  t.equal(noName.stderr, 'gatehouse: --name is required\nusage: gatehouse user create --email <email> --name <name> [--role <role>]... [--superuser]\n')
  const short = await cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann'], await databaseEnv(t, dataDir), 'short\n')
  t.equal(short.code, 1)
  t.equal(short.stderr, 'gatehouse: the password (stdin) must be 8 to 1024 characters\n')
})

t.test('the CLI without arguments prints the usage and exits 2', async (t) => {
  const run = await cli([], { DATA_DIR: tempDir(t) })
  t.equal(run.code, 2)
  t.equal(run.stdout, '')
  t.match(run.stderr, /^Usage:\n {2}gatehouse migrate\n/)
  t.match(run.stderr, /gatehouse user create --email <email> --name <name>/)
})
