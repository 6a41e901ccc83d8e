import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'
import { alertCode, PageClient, portalApp } from '../portal/support.js'
import { BAD_LOGIN, ISO, MISSING_ADMIN, NOT_FOUND as USER_NOT_FOUND, REVOKED, SUPERUSER_REQUIRED, UUID } from '../../patterns.js'

/*
 * Service accounts and the admin routes of API keys (routes/api/api-keys.ts, src/api-keys/api-key-service.ts,
 * docs/api-keys.md#service-accounts): a user of kind `service` with no password and no sign-in on any
 * path, never mailed, never a superuser, listed with `?kind=service`; its keys made and revoked by admins.
 */

const ON = { ENABLE_API_KEYS: true, ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}', ENABLE_EMAIL_OTP: true }
const KEY = /^gh_[0-9a-z]{12}_[0-9A-Za-z]{38}$/
const NOT_SERVICE = { error: 'Conflict', message: 'API keys are created for service accounts only', code: 'not_service_account' }
const INVALID_OTP = { error: 'Bad Request', message: 'The code is invalid or has expired', code: 'invalid_otp' }
const KEY_NOT_FOUND = { error: 'Not Found', message: 'API key not found', code: 'not_found' }

interface Account { id: string, email: string, kind: string, roles: string[], created_at: string }

async function admin (app: FastifyInstance, options: { isSuperuser?: boolean } = {}): Promise<string> {
  const user = await createUser(app, { roles: ['admin'], ...options })
  return (await login(app, user)).access_token
}

async function serviceAccount (app: FastifyInstance, token: string, payload: Record<string, unknown> = { name: 'Nightly Backup', roles: ['backup'] }): Promise<Account> {
  const res = await app.inject({ method: 'POST', url: '/api/service-accounts', headers: authHeader(token), payload })
  if (res.statusCode !== 201) throw new Error(`creating a service account failed: ${res.body}`)
  return res.json() as Account
}

/**
 * The audit trail's API key and service account events, newest first, once `count` of them are
 * written (the trail is written after the answer), with the fields the tests compare.
 */
async function keyEvents (app: FastifyInstance, token: string, count: number): Promise<Array<Record<string, unknown>>> {
  let events: Array<Record<string, unknown>> = []
  for (let i = 0; i < 50; i++) {
    const res = await app.inject({ method: 'GET', url: '/api/audit', headers: authHeader(token) })
    events = (res.json().data as Array<Record<string, unknown>>).filter((e) => String(e.event).includes('api_key') || e.event === 'service_account_created')
    if (events.length === count) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return events.map((e) => ({ event: e.event, outcome: e.outcome, actor_id: e.actor_id, user_id: e.user_id, session_id: e.session_id, detail: e.detail }))
}

t.test('POST /api/service-accounts answers 201 with a UserResponse of kind service and its Location', async (t) => {
  const app = await build(t, ON)
  const token = await admin(app)
  const res = await app.inject({ method: 'POST', url: '/api/service-accounts', headers: authHeader(token), payload: { name: 'Nightly Backup', roles: ['backup'] } })
  t.equal(res.statusCode, 201)
  const body = res.json() as Account
  t.match(body.id, UUID)
  t.equal(res.headers.location, `/api/users/${body.id}`)
  t.equal(body.email, `nightly-backup.${body.id.slice(0, 8)}@service.invalid`)
  t.match(body.created_at, ISO)
  t.strictSame(body, {
    id: body.id, email: body.email, name: 'Nightly Backup', age: null, created_at: body.created_at, updated_at: body.created_at, roles: ['backup'], is_superuser: false, email_verified: false, kind: 'service'
  })
  const fallback = await serviceAccount(app, token, { name: '§§' })
  t.equal(fallback.email, `service.${fallback.id.slice(0, 8)}@service.invalid`, 'a name with no letter or digit gives the slug `service`')
  t.same(fallback.roles, ['user'], 'roles default to DEFAULT_ROLES')

  const listed = await app.inject({ method: 'GET', url: '/api/users?kind=service', headers: authHeader(token) })
  t.equal(listed.statusCode, 200)
  t.same(listed.json().data.map((u: Account) => u.id), [body.id, fallback.id], 'only the service accounts')
  t.equal(listed.json().pagination.total, 2)
  const people = await app.inject({ method: 'GET', url: '/api/users?kind=user', headers: authHeader(token) })
  t.same(people.json().data.map((u: Account) => u.kind), ['user'])
  const all = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(token) })
  t.equal(all.json().pagination.total, 3)

  const user = await createUser(app)
  const { access_token: plain } = await login(app, user)
  const refused = await app.inject({ method: 'POST', url: '/api/service-accounts', headers: authHeader(plain), payload: { name: 'x1' } })
  t.same([refused.statusCode, refused.json()], [403, MISSING_ADMIN])
  const stray = await app.inject({ method: 'POST', url: '/api/service-accounts', headers: authHeader(token), payload: { name: 'x1', is_superuser: true } })
  t.equal(stray.statusCode, 422, 'no is_superuser in the body')
})

t.test('a service account never signs in: login, password reset and email codes answer as for a wrong password or unknown address', async (t) => {
  const app = await build(t, ON)
  const token = await admin(app)
  const account = await serviceAccount(app, token)
  for (const password of ['', 'Anything-1234']) {
    const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: account.email, password: password === '' ? 'x' : password } })
    t.same([res.statusCode, res.json()], [401, BAD_LOGIN])
  }
  const person = await createUser(app)
  for (const email of [account.email, person.email]) {
    t.equal((await app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email } })).statusCode, 202)
    t.equal((await app.inject({ method: 'POST', url: '/auth/send-otp', payload: { email, purpose: 'login' } })).statusCode, 202)
  }
  await app.services.recovery.settled()
  const mails = (await app.store.mailOutbox.list()).map((m) => m.to)
  t.notOk(mails.includes(account.email), 'nothing is ever mailed to a service account')
  t.ok(mails.includes(person.email), 'the negative control: a person gets the mails')
  const code = await app.inject({ method: 'POST', url: '/auth/verify-otp', payload: { email: account.email, code: '123456', purpose: 'login' } })
  t.same([code.statusCode, code.json()], [400, INVALID_OTP])
  // even with a password set from the command line, no session starts
  await app.services.users.setPassword(account.id, 'Set-By-Operator-1', { context: { ip: 'cli' } })
  const withPassword = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: account.email, password: 'Set-By-Operator-1' } })
  t.same([withPassword.statusCode, withPassword.json()], [401, BAD_LOGIN])
})

t.test('a service account never signs in on the portal: the form and the email code answer as for a wrong password or code', async (t) => {
  const app = await portalApp(t, ON)
  const token = await admin(app)
  const account = await serviceAccount(app, token)
  await app.services.users.setPassword(account.id, 'Set-By-Operator-1', { context: { ip: 'cli' } })
  const person = await createUser(app)
  const browser = new PageClient(app)
  const pageOf = async (email: string, password: string) => {
    const res = await browser.post('/portal/login', { email, password })
    return { status: res.statusCode, alert: alertCode(res.body), page: res.body.replaceAll(email, 'EMAIL') }
  }
  const wrongPassword = await pageOf(person.email, 'Not-The-Password-1')
  t.same([wrongPassword.status, wrongPassword.alert], [401, 'invalid_credentials'])
  for (const password of ['Set-By-Operator-1', 'Anything-1234']) {
    t.same(await pageOf(account.email, password), wrongPassword, `the page a wrong password gets (${password})`)
  }
  const signedIn = await browser.post('/portal/login', { email: person.email, password: person.password })
  t.equal(signedIn.statusCode, 303, 'the negative control: a person signs in on the same form')

  const codeOf = async (email: string) => {
    const client = new PageClient(app)
    t.equal((await client.post('/portal/code', { email })).statusCode, 303)
    const res = await client.post('/portal/code/verify', { code: '123456' })
    return { status: res.statusCode, alert: alertCode(res.body) }
  }
  t.same(await codeOf(account.email), await codeOf(person.email), 'a made-up code: the answer a person gets')
  t.same((await codeOf(account.email)).alert, 'invalid_otp')
  await app.services.recovery.settled()
  t.notOk((await app.store.mailOutbox.list()).some((m) => m.to === account.email), 'no code was mailed to the account')
})

t.test('DELETE /api/users/:id deletes a service account as a user, and ends its keys', async (t) => {
  const app = await build(t, ON)
  const token = await admin(app)
  const account = await serviceAccount(app, token)
  const { key } = (await app.inject({ method: 'POST', url: `/api/users/${account.id}/api-keys`, headers: authHeader(token), payload: { name: 'job' } })).json() as { key: string }
  t.equal((await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(key) })).statusCode, 200)
  const deleted = await app.inject({ method: 'DELETE', url: `/api/users/${account.id}`, headers: authHeader(token) })
  t.same([deleted.statusCode, deleted.body], [204, ''])
  const refused = await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(key) })
  t.same([refused.statusCode, refused.json()], [401, REVOKED])
  const shown = await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(token) })
  t.same([shown.statusCode, shown.json()], [404, USER_NOT_FOUND])
  const listed = await app.inject({ method: 'GET', url: '/api/users?kind=service', headers: authHeader(token) })
  t.same(listed.json().data, [])
})

t.test('a service account is never a superuser, and is managed as a user', async (t) => {
  const app = await build(t, ON)
  const token = await admin(app, { isSuperuser: true })
  const account = await serviceAccount(app, token)
  const promote = await app.inject({ method: 'PUT', url: `/api/users/${account.id}`, headers: authHeader(token), payload: { is_superuser: true } })
  t.equal(promote.statusCode, 422)
  t.same(promote.json().errors, { is_superuser: ['The is_superuser field is invalid'] })
  const renamed = await app.inject({ method: 'PUT', url: `/api/users/${account.id}`, headers: authHeader(token), payload: { name: 'Backups' } })
  t.equal(renamed.statusCode, 200)
  t.equal(renamed.json().kind, 'service')
  const shown = await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(token) })
  t.equal(shown.json().kind, 'service')
})

t.test('admins create, list and revoke a service account\'s keys; a person\'s keys are their own to create (409 not_service_account)', async (t) => {
  const app = await build(t, ON)
  const token = await admin(app)
  const account = await serviceAccount(app, token)
  const res = await app.inject({ method: 'POST', url: `/api/users/${account.id}/api-keys`, headers: authHeader(token), payload: { name: 'backup job' } })
  t.equal(res.statusCode, 201)
  const key = res.json() as { id: string, key: string, roles: string[] }
  t.match(key.key, KEY)
  t.same(key.roles, ['backup'], 'roles default to the account\'s')
  const beyond = await app.inject({ method: 'POST', url: `/api/users/${account.id}/api-keys`, headers: authHeader(token), payload: { name: 'x', roles: ['admin'] } })
  t.same([beyond.statusCode, beyond.json()], [403, { ...MISSING_ADMIN, required_roles: ['admin'] }], 'roles beyond the account\'s')
  const works = await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(key.key) })
  t.equal(works.statusCode, 200)
  t.equal(works.json().kind, 'service')

  const person = await createUser(app)
  const refused = await app.inject({ method: 'POST', url: `/api/users/${person.id}/api-keys`, headers: authHeader(token), payload: { name: 'x' } })
  t.same([refused.statusCode, refused.json()], [409, NOT_SERVICE])
  const unknown = await app.inject({ method: 'POST', url: '/api/users/0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e11/api-keys', headers: authHeader(token), payload: { name: 'x' } })
  t.equal(unknown.statusCode, 404)

  const list = await app.inject({ method: 'GET', url: `/api/users/${account.id}/api-keys`, headers: authHeader(token) })
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((k: { id: string }) => k.id), [key.id])
  const deleted = await app.inject({ method: 'DELETE', url: `/api/users/${account.id}/api-keys/${key.id}`, headers: authHeader(token) })
  t.equal(deleted.statusCode, 204)
  const after = await app.inject({ method: 'GET', url: `/api/users/${account.id}`, headers: authHeader(key.key) })
  t.same([after.statusCode, after.json()], [401, REVOKED])
  const again = await app.inject({ method: 'DELETE', url: `/api/users/${account.id}/api-keys/${key.id}`, headers: authHeader(token) })
  t.equal(again.statusCode, 404)
})

t.test('a superuser\'s keys are listed and revoked by a superuser only', async (t) => {
  const app = await build(t, ON)
  const superuser = await createUser(app, { roles: ['admin'], isSuperuser: true })
  const { access_token: superToken } = await login(app, superuser)
  const own = await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(superToken), payload: { name: 'mine' } })
  const keyId = own.json().id as string
  const adminToken = await admin(app)
  const list = await app.inject({ method: 'GET', url: `/api/users/${superuser.id}/api-keys`, headers: authHeader(adminToken) })
  t.same([list.statusCode, list.json()], [403, SUPERUSER_REQUIRED])
  const revoke = await app.inject({ method: 'DELETE', url: `/api/users/${superuser.id}/api-keys/${keyId}`, headers: authHeader(adminToken) })
  t.same([revoke.statusCode, revoke.json()], [403, SUPERUSER_REQUIRED])
  const bySuper = await app.inject({ method: 'GET', url: `/api/users/${superuser.id}/api-keys`, headers: authHeader(superToken) })
  t.equal(bySuper.statusCode, 200)
  t.equal(bySuper.json().data.length, 1)
  const user = await createUser(app)
  const { access_token: plain } = await login(app, user)
  const notAdmin = await app.inject({ method: 'GET', url: `/api/users/${user.id}/api-keys`, headers: authHeader(plain) })
  t.same([notAdmin.statusCode, notAdmin.json()], [403, MISSING_ADMIN], 'not even one\'s own, through the admin route')
})

t.test('DELETE /api/users/:id/api-keys/:key_id naming another user\'s key is 404 and the key keeps working; an unknown user is 404, a non-admin 403', async (t) => {
  const app = await build(t, ON)
  const superuser = await createUser(app, { roles: ['admin'], isSuperuser: true })
  const { access_token: superToken } = await login(app, superuser)
  const superKey = (await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(superToken), payload: { name: 'mine' } })).json() as { id: string, key: string }
  const adminToken = await admin(app)
  const person = await createUser(app)
  const { access_token: personToken } = await login(app, person)
  const account = await serviceAccount(app, adminToken)

  // an admin may act on a plain user's keys: naming that user with a superuser's key id must not reach the superuser's key
  const crossed = await app.inject({ method: 'DELETE', url: `/api/users/${person.id}/api-keys/${superKey.id}`, headers: authHeader(adminToken) })
  t.same([crossed.statusCode, crossed.json()], [404, KEY_NOT_FOUND])
  const viaAccount = await app.inject({ method: 'DELETE', url: `/api/users/${account.id}/api-keys/${superKey.id}`, headers: authHeader(superToken) })
  t.same([viaAccount.statusCode, viaAccount.json()], [404, KEY_NOT_FOUND], 'nor by a superuser naming another owner')
  const works = await app.inject({ method: 'GET', url: `/api/users/${superuser.id}`, headers: authHeader(superKey.key) })
  t.equal(works.statusCode, 200, 'the key still works')
  t.same((await app.inject({ method: 'GET', url: `/api/users/${superuser.id}/api-keys`, headers: authHeader(superToken) })).json().data.map((k: { id: string }) => k.id), [superKey.id], 'and is still listed')

  const unknownUser = '0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e11'
  const listUnknown = await app.inject({ method: 'GET', url: `/api/users/${unknownUser}/api-keys`, headers: authHeader(adminToken) })
  t.same([listUnknown.statusCode, listUnknown.json()], [404, USER_NOT_FOUND])
  const revokeUnknown = await app.inject({ method: 'DELETE', url: `/api/users/${unknownUser}/api-keys/${superKey.id}`, headers: authHeader(adminToken) })
  t.same([revokeUnknown.statusCode, revokeUnknown.json()], [404, USER_NOT_FOUND])
  const byPerson = await app.inject({ method: 'POST', url: `/api/users/${account.id}/api-keys`, headers: authHeader(personToken), payload: { name: 'x' } })
  t.same([byPerson.statusCode, byPerson.json()], [403, MISSING_ADMIN])
  const ownByPerson = await app.inject({ method: 'POST', url: `/api/users/${person.id}/api-keys`, headers: authHeader(personToken), payload: { name: 'x' } })
  t.same([ownByPerson.statusCode, ownByPerson.json()], [403, MISSING_ADMIN], 'not even for oneself, through the admin route')
  const revokedByPerson = await app.inject({ method: 'DELETE', url: `/api/users/${superuser.id}/api-keys/${superKey.id}`, headers: authHeader(personToken) })
  t.same([revokedByPerson.statusCode, revokedByPerson.json()], [403, MISSING_ADMIN])
  t.equal((await app.inject({ method: 'GET', url: `/api/users/${superuser.id}`, headers: authHeader(superKey.key) })).statusCode, 200, 'the key works after all of them')
})

t.test('audit: api_key_created, api_key_revoked with the reason, service_account_created', async (t) => {
  const app = await build(t, ON)
  const adminUser = await createUser(app, { roles: ['admin'] })
  const { access_token: token } = await login(app, adminUser)
  const account = await serviceAccount(app, token)
  const key = (await app.inject({ method: 'POST', url: `/api/users/${account.id}/api-keys`, headers: authHeader(token), payload: { name: 'job' } })).json() as { id: string, expires_at: string }
  await app.inject({ method: 'DELETE', url: `/api/users/${account.id}/api-keys/${key.id}`, headers: authHeader(token) })
  t.same(await keyEvents(app, token, 3), [
    { event: 'api_key_revoked', outcome: 'success', actor_id: adminUser.id, user_id: account.id, session_id: null, detail: `revoked_by_admin: key ${key.id}` },
    { event: 'api_key_created', outcome: 'success', actor_id: adminUser.id, user_id: account.id, session_id: null, detail: `key ${key.id} "job"; roles: [backup]; expires ${key.expires_at}` },
    { event: 'service_account_created', outcome: 'success', actor_id: adminUser.id, user_id: account.id, session_id: null, detail: 'roles: [backup]' }
  ])
})

t.test('audit: a user\'s own key is created with its owner as the actor; api_key_revoked says revoked_by_owner, grant_removed or user_deleted', async (t) => {
  const app = await build(t, ON)
  const adminUser = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, adminUser)
  const user = await createUser(app, { roles: ['user', 'reports'] })
  const { access_token: token } = await login(app, user)
  const keys: Array<{ id: string, name: string, roles: string[], expires_at: string }> = []
  for (const [name, role] of [['own', 'user'], ['reports', 'reports'], ['last', 'user']]) {
    const res = await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload: { name, roles: [role] } })
    t.equal(res.statusCode, 201)
    keys.push(res.json())
  }
  const [own, reports, last] = keys as [typeof keys[0], typeof keys[0], typeof keys[0]]
  t.equal((await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${own.id}`, headers: authHeader(token) })).statusCode, 204)
  t.equal((await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(adminToken), payload: { roles: ['user'] } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })).statusCode, 204)
  const revoked = (key: typeof own, actor: string, reason: string) => ({ event: 'api_key_revoked', outcome: 'success', actor_id: actor, user_id: user.id, session_id: null, detail: `${reason}: key ${key.id}` })
  const created = (key: typeof own) => ({
    event: 'api_key_created', outcome: 'success', actor_id: user.id, user_id: user.id, session_id: null, detail: `key ${key.id} ${JSON.stringify(key.name)}; roles: [${key.roles.join(',')}]; expires ${key.expires_at}`
  })
  t.same(await keyEvents(app, adminToken, 6), [
    revoked(last, adminUser.id, 'user_deleted'),
    revoked(reports, adminUser.id, 'grant_removed'),
    revoked(own, user.id, 'revoked_by_owner'),
    created(last),
    created(reports),
    created(own)
  ])
})
