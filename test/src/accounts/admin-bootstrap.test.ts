// Proves src/services.ts (bootstrapAdmin).
import t, { type Test } from 'tap'
import { buildFrom, createUser, tempDir, testConfig } from '../../helper.js'

/*
 * ADMIN_EMAIL names the superuser to create at start. An account that already holds that
 * address (someone registered it first) is never promoted: the start goes on, and a warning
 * tells the operator what happened and what to do.
 */

const ADMIN = { ADMIN_EMAIL: 'Root@Example.com', ADMIN_PASSWORD: 'Admin-Pass-42!' }
const WARNING = 'ADMIN_EMAIL root@example.com belongs to an existing account that is not a superuser: it was not promoted and no superuser was created. ' +
  'Set ADMIN_EMAIL to an address no account uses and restart, or create a superuser with `gatehouse user create --email <email> --name <name> --superuser`.'

interface LogLine { level: number, msg: string, email?: string }

/** An app on `dataDir` whose log lines at warn and above are collected. */
async function start (t: Test, dataDir: string, values: Record<string, unknown> = {}) {
  const lines: LogLine[] = []
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...values }), {
    logStream: { write: (line) => { lines.push(JSON.parse(line) as LogLine) } }
  })
  return { app, warnings: () => lines.filter((l) => l.level === 40).map(({ msg, email }) => ({ msg, email })) }
}

t.test('an ADMIN_EMAIL held by a non-superuser account is not promoted, and the start warns and goes on', async (t) => {
  const dataDir = tempDir(t)
  const first = await start(t, dataDir)
  const squatter = await createUser(first.app, { email: 'root@example.com', roles: ['user'] })
  await first.app.close()

  const { app, warnings } = await start(t, dataDir, ADMIN)
  t.same(warnings(), [{ msg: WARNING, email: 'root@example.com' }])
  const account = await app.store.users.findByEmail('root@example.com')
  t.same({ id: account?.id, roles: account?.roles, isSuperuser: account?.isSuperuser, name: account?.name }, { id: squatter.id, roles: ['user'], isSuperuser: false, name: 'Test User' }, 'the account stays as it was')
  const admin = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD } })
  t.equal(admin.statusCode, 401, 'ADMIN_PASSWORD does not sign in to the squatted account')
  t.same(admin.json(), { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' })
  const health = await app.inject({ method: 'GET', url: '/health' })
  t.equal(health.statusCode, 200, 'the server started')
})

t.test('two instances starting at once over a squatted ADMIN_EMAIL both warn and neither promotes', async (t) => {
  const dataDir = tempDir(t)
  const first = await start(t, dataDir)
  await createUser(first.app, { email: 'root@example.com' })
  await first.app.close()
  const [a, b] = await Promise.all([start(t, dataDir, ADMIN), start(t, dataDir, ADMIN)])
  t.same(a.warnings(), [{ msg: WARNING, email: 'root@example.com' }])
  t.same(b.warnings(), [{ msg: WARNING, email: 'root@example.com' }])
  t.equal((await a.app.store.users.findByEmail('root@example.com'))?.isSuperuser, false)
})

t.test('a fresh bootstrap, even by two instances at once, warns nothing (the negative control)', async (t) => {
  const dataDir = tempDir(t)
  const [a, b] = await Promise.all([start(t, dataDir, ADMIN), start(t, dataDir, ADMIN)])
  t.same(a.warnings(), [])
  t.same(b.warnings(), [])
  t.equal((await a.app.store.users.findByEmail('root@example.com'))?.isSuperuser, true)
  const again = await start(t, dataDir, ADMIN)
  t.same(again.warnings(), [], 'a restart finding its own superuser warns nothing either')
})
