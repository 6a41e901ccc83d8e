// Proves src/services.ts (bootstrapAdmin).
import { sql } from 'kysely'
import t from 'tap'
import { ConfigError, type Config } from '../../../src/config/config.js'
import { build, buildFrom, login, rawSql, tempDir, testConfig } from '../../helper.js'
import { ISO, UUID } from '../../patterns.js'

const ADMIN = { ADMIN_EMAIL: 'Root@Example.com', ADMIN_PASSWORD: 'Admin-Pass-42!' }

/** Rows of the users table, read straight from the database. */
async function userRows (config: Config): Promise<Array<{ email: string, name: string, roles: string, is_superuser: number }>> {
  return await rawSql(config, sql<{ email: string, name: string, roles: string, is_superuser: number }>`select email, name, roles, is_superuser from users order by created_at`)
}

t.test('ADMIN_EMAIL and ADMIN_PASSWORD create a superuser admin that can sign in', async (t) => {
  const app = await build(t, ADMIN)
  const { response } = await login(app, { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD })
  const user = response.json().user
  t.match(user.id, UUID)
  t.match(user.created_at, ISO)
  t.same(user, {
    id: user.id,
    email: 'root@example.com',
    name: 'Administrator',
    age: null,
    roles: ['admin'],
    is_superuser: true,
    email_verified: false,
    created_at: user.created_at,
    updated_at: user.created_at
  })

  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${response.json().access_token}` } })
  t.equal(me.statusCode, 200)
  t.same(me.json(), user)
})

t.test('without ADMIN_EMAIL no user is created', async (t) => {
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: tempDir(t) }))
  t.same(await userRows(app.config), [])
})

t.test('a second start on the same data folder neither creates another admin nor fails', async (t) => {
  const dataDir = tempDir(t)
  const first = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...ADMIN }))
  await first.close()
  const second = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...ADMIN }))
  t.same(await userRows(second.config), [{ email: 'root@example.com', name: 'Administrator', roles: '["admin"]', is_superuser: 1 }])
  await login(second, { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD })
})

t.test('a later start with another ADMIN_PASSWORD does not change the existing admin', async (t) => {
  const dataDir = tempDir(t)
  const first = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...ADMIN }))
  await first.close()
  const second = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'Other-Pass-42!' }))
  t.equal((await userRows(second.config)).length, 1)
  const wrong = await second.inject({ method: 'POST', url: '/auth/login', payload: { email: 'root@example.com', password: 'Other-Pass-42!' } })
  t.equal(wrong.statusCode, 401)
  t.same(wrong.json(), { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' })
  await login(second, { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD })
})

t.test('two instances starting at once on one fresh database create exactly one admin', async (t) => {
  const dataDir = tempDir(t)
  const [a, b] = await Promise.all([
    buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...ADMIN })),
    buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...ADMIN }))
  ])
  t.same(await userRows(a.config), [{ email: 'root@example.com', name: 'Administrator', roles: '["admin"]', is_superuser: 1 }])
  const found = await a.store.users.findByEmail('root@example.com')
  t.equal(found?.isSuperuser, true)
  await login(a, { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD })
  await login(b, { email: 'root@example.com', password: ADMIN.ADMIN_PASSWORD })
})

t.test('ADMIN_EMAIL without ADMIN_PASSWORD is a configuration error', async (t) => {
  const error = t.throws(() => testConfig(t, { ADMIN_EMAIL: 'root@example.com' }))
  t.type(error, ConfigError)
  t.match(error, { message: 'Invalid configuration: ADMIN_PASSWORD is required when ADMIN_EMAIL is set' })
})

t.test('an ADMIN_PASSWORD shorter than 8 characters is a configuration error', async (t) => {
  const error = t.throws(() => testConfig(t, { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'short' }))
  t.type(error, ConfigError)
  t.match(error, { message: /^Invalid configuration: ADMIN_PASSWORD must NOT have fewer than 8 characters/ })
})
