// routes/api/passkeys.ts and routes/api/user-passkeys.ts: listing, renaming, removing (SPEC §14, §14.2)
import { sql } from 'kysely'
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { authHeader, build, claimsOf, createUser, login, rawSql } from '../../helper.js'
import { INSUFFICIENT_SCOPE, ISO, MISSING_ADMIN, NOT_FOUND, SUPERUSER_REQUIRED } from '../../patterns.js'
import { latestMail, queued, recoveryApp } from '../auth/recovery/support.js'
import { SoftAuthenticator } from '../../webauthn-authenticator.js'
import { auditRows, ORIGIN, PASSKEYS_ON, passkeyApp, post, registerWith, signInWith, testClock, userWithPasskey } from './support.js'

const PASSKEY_NOT_FOUND = { error: 'Not Found', message: 'Passkey not found', code: 'not_found' }
const LAST_CREDENTIAL = { error: 'Conflict', message: 'This is the last way to sign in to the account', code: 'last_credential' }

async function call (app: FastifyInstance, method: 'GET' | 'PATCH' | 'DELETE', url: string, token: string, payload?: Record<string, unknown>) {
  return await app.inject({ method, url, headers: authHeader(token), ...(payload === undefined ? {} : { payload }) })
}

test('GET /api/auth/passkeys: the caller\'s own, newest first; PATCH renames; another user\'s or an unknown id is 404', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app)
  const second = await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN, { be: true }), {}, { name: 'Phone' })
  const other = await userWithPasskey(app)
  const list = await call(app, 'GET', '/api/auth/passkeys', user.access_token)
  t.equal(list.statusCode, 200)
  const data = (list.json() as { data: Array<{ id: string, created_at: string }> }).data
  t.strictSame(data.map((p) => p.id), [(second.json() as { id: string }).id, user.passkeyId], 'newest first')
  t.strictSame(data[1], {
    id: user.passkeyId, name: 'Passkey', created_at: data[1]?.created_at, last_used_at: null, aaguid: '00000000-0000-0000-0000-000000000000', transports: ['internal'], backup_eligible: false, backed_up: false
  })
  t.match(data[1]?.created_at, ISO)

  const renamed = await call(app, 'PATCH', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, { name: 'YubiKey' })
  t.equal(renamed.statusCode, 200)
  t.strictSame(renamed.json(), { ...data[1], name: 'YubiKey' })
  for (const [what, id] of [['another user\'s', other.passkeyId], ['unknown', 'AAAA']] as const) {
    const res = await call(app, 'PATCH', `/api/auth/passkeys/${id}`, user.access_token, { name: 'Mine now' })
    t.strictSame([res.statusCode, res.json()], [404, PASSKEY_NOT_FOUND], `PATCH ${what}`)
    const removed = await call(app, 'DELETE', `/api/auth/passkeys/${id}`, user.access_token, {})
    t.strictSame([removed.statusCode, removed.json()], [404, PASSKEY_NOT_FOUND], `DELETE ${what}`)
  }
  t.equal((await call(app, 'GET', '/api/auth/passkeys', other.access_token)).json().data[0].name, 'Passkey', 'theirs untouched')
  for (const name of ['', ' ', 'x'.repeat(65)]) {
    t.equal((await call(app, 'PATCH', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, { name })).statusCode, 422, `name ${JSON.stringify(name.slice(0, 8))}`)
  }
  t.equal((await call(app, 'PATCH', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, { name: 'x'.repeat(64) })).statusCode, 200, '64 characters')
  t.equal((await app.inject({ method: 'GET', url: '/api/auth/passkeys' })).statusCode, 401, 'no token')
})

test('DELETE /api/auth/passkeys/:id: recent authentication; no session ends; a notice mail; audited', async (t) => {
  const clock = testClock()
  const app = await recoveryApp(t, PASSKEYS_ON, undefined, { clock: clock.clock })
  const user = await userWithPasskey(app)
  const signedInAt = claimsOf(user.access_token).auth_time * 1000
  clock.now = signedInAt + 301_000
  const stale = await call(app, 'DELETE', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, {})
  t.strictSame([stale.statusCode, stale.json()], [403, { error: 'Forbidden', message: 'Sign in again to make this change', code: 'reauth_required', reason: 'reauth_required' }])
  const noBody = await app.inject({ method: 'DELETE', url: `/api/auth/passkeys/${user.passkeyId}`, headers: authHeader(user.access_token) })
  t.equal(noBody.statusCode, 403, 'no body at all: the same')
  const wrong = await call(app, 'DELETE', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, { password: 'Wrong-Password-1' })
  t.strictSame([wrong.statusCode, wrong.json()], [400, { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' }])
  const before = (await queued(app, user.email)).length
  const removed = await call(app, 'DELETE', `/api/auth/passkeys/${user.passkeyId}`, user.access_token, { password: user.password })
  t.equal(removed.statusCode, 204)
  t.equal(removed.body, '')
  t.strictSame((await call(app, 'GET', '/api/auth/passkeys', user.access_token)).json(), { data: [] }, 'gone; the access token still works')
  const refreshed = await post(app, '/auth/refresh', { refresh_token: user.refresh_token })
  t.equal(refreshed.statusCode, 200, 'and the session refreshes: removal revokes no session')
  t.equal((await queued(app, user.email)).length, before + 1)
  t.match((await latestMail(app, user.email)).text, /A passkey \("Passkey"\) was removed from your account\./)
  const audit = (await auditRows(app)).filter((r) => r.event === 'passkey_removed')
  t.strictSame(audit.map((r) => [r.outcome, r.user_id, r.detail]), [['success', user.id, user.passkeyId]])
  t.equal((await signInWith(app, user.authenticator)).statusCode, 400, 'the removed passkey signs nobody in')
})

test('a user without a password keeps their last passkey (409 last_credential); an admin may remove it', async (t) => {
  const app = await passkeyApp(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const user = await userWithPasskey(app)
  const spare = new SoftAuthenticator(ORIGIN)
  const second = (await registerWith(app, user.access_token, spare)).json() as { id: string }
  await rawSql(app.config, sql`update users set password_hash = '' where id = ${user.id}`)
  const signedIn = await signInWith(app, user.authenticator)
  const token = (signedIn.json() as { access_token: string }).access_token
  t.equal((await call(app, 'DELETE', `/api/auth/passkeys/${user.passkeyId}`, token, {})).statusCode, 204, 'one of two')
  const last = await call(app, 'DELETE', `/api/auth/passkeys/${second.id}`, token, {})
  t.strictSame([last.statusCode, last.json()], [409, LAST_CREDENTIAL])
  const byAdmin = await call(app, 'DELETE', `/api/users/${user.id}/passkeys/${second.id}`, adminToken)
  t.equal(byAdmin.statusCode, 204, 'the admin route may (the user recovers by a reset)')
  t.strictSame(await rawSql(app.config, sql`select id from passkeys where user_id = ${user.id}`), [])

  const withPassword = await userWithPasskey(app)
  t.equal((await call(app, 'DELETE', `/api/auth/passkeys/${withPassword.passkeyId}`, withPassword.access_token, {})).statusCode, 204, 'negative control: with a password, the last passkey goes')
})

test('/api/users/:id/passkeys: admins; a superuser\'s only for a superuser; unknown user or passkey 404', async (t) => {
  const app = await passkeyApp(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const superuser = await userWithPasskey(app, {}, { isSuperuser: true })
  const user = await userWithPasskey(app)
  const other = await userWithPasskey(app)

  const listed = await call(app, 'GET', `/api/users/${user.id}/passkeys`, adminToken)
  t.equal(listed.statusCode, 200)
  t.strictSame((listed.json() as { data: Array<{ id: string }> }).data.map((p) => p.id), [user.passkeyId])
  const asUser = await call(app, 'GET', `/api/users/${other.id}/passkeys`, user.access_token)
  t.strictSame([asUser.statusCode, asUser.json()], [403, MISSING_ADMIN])
  const theSuperuser = await call(app, 'GET', `/api/users/${superuser.id}/passkeys`, adminToken)
  t.strictSame([theSuperuser.statusCode, theSuperuser.json(), theSuperuser.headers['www-authenticate']], [403, SUPERUSER_REQUIRED, INSUFFICIENT_SCOPE])
  const removeSuper = await call(app, 'DELETE', `/api/users/${superuser.id}/passkeys/${superuser.passkeyId}`, adminToken)
  t.strictSame([removeSuper.statusCode, removeSuper.json()], [403, SUPERUSER_REQUIRED])
  t.equal((await call(app, 'GET', `/api/users/${superuser.id}/passkeys`, superuser.access_token)).statusCode, 200, 'by a superuser')
  const unknownUser = await call(app, 'GET', '/api/users/00000000-0000-4000-8000-000000000000/passkeys', adminToken)
  t.strictSame([unknownUser.statusCode, unknownUser.json()], [404, NOT_FOUND])
  const mismatch = await call(app, 'DELETE', `/api/users/${user.id}/passkeys/${other.passkeyId}`, adminToken)
  t.strictSame([mismatch.statusCode, mismatch.json()], [404, PASSKEY_NOT_FOUND], 'another user\'s passkey under :id')
  const removed = await call(app, 'DELETE', `/api/users/${user.id}/passkeys/${user.passkeyId}`, adminToken)
  t.equal(removed.statusCode, 204)
  const audit = (await auditRows(app)).filter((r) => r.event === 'passkey_removed')
  t.strictSame(audit.map((r) => [r.user_id, r.detail]), [[user.id, user.passkeyId]])
  t.equal((await call(app, 'GET', `/api/users/${other.id}/passkeys`, adminToken)).json().data.length, 1, 'the other user keeps theirs')
})

test('with ENABLE_PASSKEYS off, no passkey route exists (404) and verify-2fa takes no passkey', async (t) => {
  const app = await build(t, { ENABLE_TOTP: true, DATA_ENCRYPTION_KEYS: `t1:${Buffer.alloc(32, 7).toString('base64')}` })
  const admin = await createUser(app, { roles: ['admin'], isSuperuser: true })
  const { access_token: token } = await login(app, admin)
  const routes: Array<[string, string]> = [
    ['POST', '/auth/passkeys/register/options'], ['POST', '/auth/passkeys/register/verify'], ['POST', '/auth/passkeys/login/options'],
    ['POST', '/auth/passkeys/login/verify'], ['GET', '/api/auth/passkeys'], ['PATCH', '/api/auth/passkeys/AAAA'], ['DELETE', '/api/auth/passkeys/AAAA'],
    ['GET', `/api/users/${admin.id}/passkeys`], ['DELETE', `/api/users/${admin.id}/passkeys/AAAA`]
  ]
  for (const [method, url] of routes) {
    const res = await app.inject({ method: method as 'GET', url, headers: authHeader(token), ...(method === 'GET' ? {} : { payload: {} }) })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.equal((res.json() as { code: string }).code, 'not_found')
  }
  const verify = await post(app, '/auth/verify-2fa', { mfa_token: 'x', challenge_id: 'y', webauthn: {} })
  t.equal(verify.statusCode, 422)
  t.strictSame(Object.keys((verify.json() as { errors: object }).errors).sort(), ['challenge_id', 'code', 'recovery_code', 'webauthn'])
})
