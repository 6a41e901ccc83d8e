import { createHash } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, changePassword, createUser, login, PASSWORD, type TestContext } from '../helper.js'
import { BREACHED, blocklistFile, FRESH, SHORT_BREACHED } from '../process/blocklist-file.js'
import { post, recoveryApp, resetTokenFor } from './auth/recovery/support.js'

/*
 * BREACHED_PASSWORDS_FILE on the JSON routes that set a password (src/validation/not-breached.ts,
 * schemas/common.ts NewPassword): register, POST /api/users, change-password and reset-password,
 * each against a file the real CLI built, with the metric that counts the refusals.
 */

const METRICS = { METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' }
const INVALID = { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed' }
const breachedMessage = (field: string) => `The ${field} field is a known breached password`

/** A list from plain lines (CRLF, an empty line, an over-long line among them) and one from SHA-1 lines as HIBP writes them. */
async function lists (t: TestContext) {
  const plain = await blocklistFile(t, `${BREACHED}\r\n\n${SHORT_BREACHED}\n${'x'.repeat(1025)}\nanother-one\n`)
  const sha1 = (p: string) => createHash('sha1').update(p, 'utf8').digest('hex').toUpperCase()
  const hibp = await blocklistFile(t, `${sha1(BREACHED)}:3303003\r\n${sha1(SHORT_BREACHED)}:12\r\n${sha1('something-else')}\r\n`, 'sha1')
  return { plain, hibp }
}

// built once for the file, by two runs of the real CLI
const built = lists(t)

async function refusedCount (app: FastifyInstance): Promise<string | undefined> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: authHeader(METRICS.METRICS_TOKEN) })
  return res.body.split('\n').find((line) => line.startsWith('gatehouse_breached_passwords_refused'))
}

function isRefused (t: Test, res: LightMyRequestResponse, errors: Record<string, string[]>, what: string): void {
  t.equal(res.statusCode, 422, what)
  t.strictSame(res.json(), { ...INVALID, errors }, what)
}

const register = async (app: FastifyInstance, payload: Record<string, unknown>) => await post(app, '/auth/register', payload)

for (const format of ['plain', 'sha1'] as const) {
  t.test(`POST /auth/register refuses a password of the list (built from ${format} lines), among the other failing fields`, async (t) => {
    const { plain, hibp } = await built
    const app = await build(t, { ENABLE_REGISTER: true, BREACHED_PASSWORDS_FILE: format === 'plain' ? plain : hibp, ...METRICS })
    t.equal(await refusedCount(app), 'gatehouse_breached_passwords_refused_total 0', 'the counter exists from the start')

    isRefused(t, await register(app, { email: 'ann@example.com', name: 'Ann', password: BREACHED }), { password: [breachedMessage('password')] }, 'alone')
    isRefused(t, await register(app, { email: 'not-an-email', name: 'A', password: BREACHED }), {
      email: ['The email field must be a valid email address'],
      password: [breachedMessage('password')],
      name: ['The name field must be at least 2 characters']
    }, 'beside the other fields\' failures')
    isRefused(t, await register(app, { email: 'ann@example.com', name: 'Ann', password: SHORT_BREACHED }),
      { password: ['The password field must be at least 8 characters'] }, 'a listed password that fails its other rules reports those only')
    t.equal(await refusedCount(app), 'gatehouse_breached_passwords_refused_total 2', 'the two refusals reported are counted')

    const created = await register(app, { email: 'ann@example.com', name: 'Ann', password: FRESH })
    t.equal(created.statusCode, 201, 'a password not in the list is taken')
    t.equal((await login(app, { email: 'ann@example.com', password: FRESH })).response.statusCode, 200)
    t.equal(await refusedCount(app), 'gatehouse_breached_passwords_refused_total 2')
  })
}

t.test('without BREACHED_PASSWORDS_FILE the same password is taken and no counter is published (the negative control)', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true, ...METRICS })
  t.equal((await register(app, { email: 'ann@example.com', name: 'Ann', password: BREACHED })).statusCode, 201)
  t.equal(await refusedCount(app), undefined)
})

t.test('POST /api/users refuses a password of the list and creates nothing', async (t) => {
  const { plain } = await built
  const app = await build(t, { BREACHED_PASSWORDS_FILE: plain })
  const admin = await createUser(app, { roles: ['admin'] })
  const token = (await login(app, admin)).access_token
  const create = async (password: string) => await app.inject({
    method: 'POST', url: '/api/users', headers: authHeader(token), payload: { email: 'new@example.com', name: 'New Person', password, age: 10 }
  })
  isRefused(t, await create(BREACHED), { password: [breachedMessage('password')], age: ['The age field must be at least 18'] }, 'with another failing field')
  const list = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(token) })
  t.equal((list.json() as { pagination: { total: number } }).pagination.total, 1, 'nothing was written')
  const res = await app.inject({ method: 'POST', url: '/api/users', headers: authHeader(token), payload: { email: 'new@example.com', name: 'New Person', password: FRESH } })
  t.equal(res.statusCode, 201)
})

t.test('POST /api/users/import refuses a line whose plain password is in the list, under its dotted path, and imports nothing', async (t) => {
  const { plain } = await built
  const app = await build(t, { BREACHED_PASSWORDS_FILE: plain })
  const root = await createUser(app, { isSuperuser: true })
  const token = (await login(app, root)).access_token
  const users = [
    { email: 'fresh@example.com', name: 'Fresh Person', password: FRESH },
    { email: 'listed@example.com', name: 'Listed Person', password: BREACHED }
  ]
  const res = await app.inject({ method: 'POST', url: '/api/users/import', headers: authHeader(token), payload: { users } })
  isRefused(t, res, { 'users.1.password': [breachedMessage('users.1.password')] }, 'the listed line, named as the import names every field')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'fresh@example.com', password: FRESH } })).statusCode, 401, 'all or nothing: the good line was not written')
  const again = await app.inject({ method: 'POST', url: '/api/users/import', headers: authHeader(token), payload: { users: [users[0]] } })
  t.equal(again.statusCode, 200, 'the line alone imports')
})

t.test('POST /api/auth/change-password refuses a new password of the list; the current one still works', async (t) => {
  const { hibp } = await built
  const app = await build(t, { BREACHED_PASSWORDS_FILE: hibp })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  isRefused(t, await changePassword(app, token, PASSWORD, BREACHED), { new_password: [breachedMessage('new_password')] }, 'new_password')
  isRefused(t, await changePassword(app, token, '', BREACHED), {
    current_password: ['The current_password field is required'],
    new_password: [breachedMessage('new_password')]
  }, 'beside a missing current password')
  t.equal((await login(app, user)).response.statusCode, 200, 'the password is unchanged')
  t.equal((await changePassword(app, token, PASSWORD, FRESH)).statusCode, 200)
})

t.test('POST /auth/reset-password refuses a new password of the list; the link stays good for a password not in it', async (t) => {
  const { plain } = await built
  const app = await recoveryApp(t, { BREACHED_PASSWORDS_FILE: plain })
  const user = await createUser(app)
  const token = await resetTokenFor(app, user.email)
  isRefused(t, await post(app, '/auth/reset-password', { token, new_password: BREACHED }), { new_password: [breachedMessage('new_password')] }, 'new_password')
  t.equal((await post(app, '/auth/reset-password', { token, new_password: FRESH })).statusCode, 200, 'the same link, unspent')
  t.equal((await login(app, { email: user.email, password: FRESH })).response.statusCode, 200)
})

t.test('the sign-in with a listed password is not refused: only a password being set is checked', async (t) => {
  const app = await build(t, { BREACHED_PASSWORDS_FILE: (await built).plain })
  const user = await createUser(app, { password: BREACHED })
  t.equal((await login(app, user)).response.statusCode, 200)
})

t.test('VALIDATION_ERROR_DETAILS reports the rule as `breached`, the password blanked', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true, VALIDATION_ERROR_DETAILS: true, BREACHED_PASSWORDS_FILE: (await built).plain })
  const res = await register(app, { email: 'ann@example.com', name: 'Ann', password: BREACHED })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), {
    ...INVALID,
    errors: { password: [breachedMessage('password')] },
    details: [{ field: 'password', tag: 'breached', value: '', message: breachedMessage('password') }]
  })
})

t.test('/openapi.json is the same with and without the setting, and never names the server-side keyword', async (t) => {
  const document = async (values: Record<string, unknown>) => (await (await build(t, values)).inject({ method: 'GET', url: '/openapi.json' })).body
  const off = await document({})
  t.equal(await document({ BREACHED_PASSWORDS_FILE: (await built).plain }), off)
  t.notMatch(off, 'notBreached')
  t.match(off, '"minLength":8', 'NewPassword\'s other rules are published')
})
