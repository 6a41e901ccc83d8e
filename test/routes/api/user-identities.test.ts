// routes/api/user-identities.ts: one user's connected accounts, for admins (src/accounts/identities.ts, src/http/access.ts adminTarget)
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t from 'tap'
import { authHeader, build, createUser, login, rawSql } from '../../helper.js'
import { INSUFFICIENT_SCOPE, MISSING_ADMIN, NOT_FOUND, SUPERUSER_REQUIRED } from '../../patterns.js'
import { latestMail, recoveryApp } from '../auth/recovery/support.js'
import { IDENTITY_NOT_FOUND, idpValues, linkIdentity, shown } from './identities-support.js'

async function call (app: FastifyInstance, method: 'GET' | 'DELETE', url: string, token: string) {
  return await app.inject({ method, url, headers: authHeader(token) })
}

t.test('GET /api/users/:id/identities: admins; a superuser\'s only for a superuser; an unknown user 404', async (t) => {
  const app = await build(t, idpValues(t))
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const superuser = await createUser(app, { isSuperuser: true })
  const user = await createUser(app)
  const first = await linkIdentity(app, user.id, 'github', { createdAt: '2026-02-01T00:00:00.000Z', lastLoginAt: '2026-02-02T00:00:00.000Z' })
  const second = await linkIdentity(app, user.id, 'ghe', { createdAt: '2026-02-03T00:00:00.000Z' })
  const theirs = await linkIdentity(app, superuser.id, 'github')

  const listed = await call(app, 'GET', `/api/users/${user.id}/identities`, adminToken)
  t.equal(listed.statusCode, 200)
  t.equal(listed.headers['cache-control'], 'no-store')
  t.strictSame(listed.json(), { data: [shown(first, 'GitHub'), shown(second, 'GitHub <Enterprise> & Co')] })
  const { access_token: userToken } = await login(app, user)
  const asUser = await call(app, 'GET', `/api/users/${user.id}/identities`, userToken)
  t.strictSame([asUser.statusCode, asUser.json()], [403, MISSING_ADMIN], 'not even their own: /api/auth/identities is theirs')
  const ofSuperuser = await call(app, 'GET', `/api/users/${superuser.id}/identities`, adminToken)
  t.strictSame([ofSuperuser.statusCode, ofSuperuser.json(), ofSuperuser.headers['www-authenticate']], [403, SUPERUSER_REQUIRED, INSUFFICIENT_SCOPE])
  const bySuperuser = await call(app, 'GET', `/api/users/${superuser.id}/identities`, (await login(app, superuser)).access_token)
  t.strictSame([bySuperuser.statusCode, bySuperuser.json()], [200, { data: [shown(theirs, 'GitHub')] }], 'a superuser may')
  const unknown = await call(app, 'GET', '/api/users/00000000-0000-4000-8000-000000000000/identities', adminToken)
  t.strictSame([unknown.statusCode, unknown.json()], [404, NOT_FOUND])
  t.equal((await call(app, 'GET', '/api/users/not-a-uuid/identities', adminToken)).statusCode, 422)
})

t.test('DELETE /api/users/:id/identities/:identity_id: even the last credential; audited with the admin as actor; a notice mail', async (t) => {
  const app = await recoveryApp(t, idpValues(t))
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const user = await createUser(app)
  const identity = await linkIdentity(app, user.id, 'ghe')
  const other = await createUser(app)
  const othersIdentity = await linkIdentity(app, other.id, 'github')
  await rawSql(app.config, sql`update users set password_hash = '' where id = ${user.id}`)

  const mismatch = await call(app, 'DELETE', `/api/users/${user.id}/identities/${othersIdentity.id}`, adminToken)
  t.strictSame([mismatch.statusCode, mismatch.json()], [404, IDENTITY_NOT_FOUND], 'another user\'s identity under :id')
  const unknown = await call(app, 'DELETE', `/api/users/${user.id}/identities/00000000-0000-4000-8000-000000000000`, adminToken)
  t.strictSame([unknown.statusCode, unknown.json()], [404, IDENTITY_NOT_FOUND])
  const asUser = await call(app, 'DELETE', `/api/users/${user.id}/identities/${identity.id}`, (await login(app, other)).access_token)
  t.strictSame([asUser.statusCode, asUser.json()], [403, MISSING_ADMIN])

  const removed = await call(app, 'DELETE', `/api/users/${user.id}/identities/${identity.id}`, adminToken)
  t.equal(removed.statusCode, 204, 'the last credential: the admin route may (the user recovers by a reset)')
  t.equal(removed.body, '')
  t.strictSame(await app.store.identities.listOf(user.id), [])
  t.equal((await app.store.identities.listOf(other.id)).length, 1, 'the other user keeps theirs')
  t.match((await latestMail(app, user.email)).text, /Your GitHub <Enterprise> & Co account was disconnected from your account/)
  await app.auditTrail.flush()
  const audit = await rawSql<{ actor_id: string, user_id: string, detail: string }>(app.config, sql`select actor_id, user_id, detail from audit_events where event = 'idp_unlinked'`)
  t.strictSame(audit, [{ actor_id: admin.id, user_id: user.id, detail: 'idp:ghe' }])
})

t.test('DELETE /api/users/:id/identities/:identity_id of a superuser: only a superuser', async (t) => {
  const app = await build(t, idpValues(t))
  const admin = await createUser(app, { roles: ['admin'] })
  const superuser = await createUser(app, { isSuperuser: true })
  const identity = await linkIdentity(app, superuser.id, 'github')
  const url = `/api/users/${superuser.id}/identities/${identity.id}`
  const byAdmin = await call(app, 'DELETE', url, (await login(app, admin)).access_token)
  t.strictSame([byAdmin.statusCode, byAdmin.json()], [403, SUPERUSER_REQUIRED])
  t.equal((await app.store.identities.listOf(superuser.id)).length, 1, 'still there')
  const another = await createUser(app, { isSuperuser: true })
  t.equal((await call(app, 'DELETE', url, (await login(app, another)).access_token)).statusCode, 204, 'negative control: a superuser may')
})
