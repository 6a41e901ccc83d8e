// Proves routes/api/users.ts and src/observers/audit-trail.ts.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, changePassword, claimsOf, createUser, login } from '../../helper.js'

const LOCAL = '127.0.0.1'

interface AuditEvent { id: string, at: string, [field: string]: unknown }

const sessionOf = (token: string) => claimsOf(token).session_id

/** The events of the trail, newest first, without their generated id and time. */
async function trail (t: Test, app: FastifyInstance, token: string, query = ''): Promise<Array<Record<string, unknown>>> {
  const res = await app.inject({ method: 'GET', url: `/api/audit?per_page=100${query}`, headers: authHeader(token) })
  t.equal(res.statusCode, 200)
  return (res.json() as { data: AuditEvent[] }).data.map(({ id: _id, at: _at, ...rest }) => rest)
}

function event (name: string, fields: Record<string, unknown>) {
  return { event: name, outcome: 'success', actor_id: null, user_id: null, session_id: null, email: null, address: LOCAL, detail: null, ...fields }
}

t.test('an admin creating, granting and deleting users leaves events naming the admin, the target, the address and the outcome', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const root = await createUser(app, { roles: [], isSuperuser: true })
  const adminToken = (await login(app, admin)).access_token
  const rootToken = (await login(app, root)).access_token
  const as = (token: string) => ({ headers: authHeader(token), remoteAddress: '198.51.100.7' })

  const created = await app.inject({
    method: 'POST',
    url: '/api/users',
    ...as(adminToken),
    payload: { email: 'carol@example.com', password: 'long-enough', name: 'Carol', roles: ['user'] }
  })
  t.equal(created.statusCode, 201)
  const carol = (created.json() as { id: string }).id
  const granted = await app.inject({ method: 'PUT', url: `/api/users/${carol}`, ...as(adminToken), payload: { roles: ['user', 'admin'] } })
  t.equal(granted.statusCode, 200)
  const promoted = await app.inject({ method: 'PUT', url: `/api/users/${carol}`, ...as(rootToken), payload: { is_superuser: true, name: 'Carol C' } })
  t.equal(promoted.statusCode, 200)
  const renamed = await app.inject({ method: 'PUT', url: `/api/users/${carol}`, ...as(rootToken), payload: { name: 'Carol D', roles: ['user', 'admin'] } })
  t.equal(renamed.statusCode, 200, 'a change that grants nothing is no grant event')
  // carol never signed in: no live session, so no sessions_revoked, yet the deletion is recorded
  const deleted = await app.inject({ method: 'DELETE', url: `/api/users/${carol}`, ...as(rootToken) })
  t.equal(deleted.statusCode, 204)

  const address = '198.51.100.7'
  t.strictSame(await trail(t, app, rootToken, `&user_id=${carol}`), [
    event('user_deleted', { actor_id: root.id, user_id: carol, address }),
    event('grants_changed', { actor_id: root.id, user_id: carol, address, detail: 'is_superuser: false -> true' }),
    event('grants_changed', { actor_id: admin.id, user_id: carol, address, detail: 'roles: [user] -> [user,admin]' }),
    event('user_created', { actor_id: admin.id, user_id: carol, address, detail: 'roles: [user]; is_superuser: false' })
  ])
  t.strictSame(await trail(t, app, rootToken, `&actor_id=${admin.id}`), [
    event('grants_changed', { actor_id: admin.id, user_id: carol, address, detail: 'roles: [user] -> [user,admin]' }),
    event('user_created', { actor_id: admin.id, user_id: carol, address, detail: 'roles: [user]; is_superuser: false' }),
    event('login_succeeded', { actor_id: admin.id, user_id: admin.id, session_id: sessionOf(adminToken) })
  ], 'the actor filter lists what the admin did')
})

t.test('removing a grant records the change and the revocation it caused, both naming the admin', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const editor = await createUser(app, { roles: ['user', 'editor'] })
  await login(app, editor)
  const adminToken = (await login(app, admin)).access_token
  const res = await app.inject({ method: 'PUT', url: `/api/users/${editor.id}`, headers: authHeader(adminToken), payload: { roles: ['user'] } })
  t.equal(res.statusCode, 200)
  t.strictSame((await trail(t, app, adminToken, `&actor_id=${admin.id}`)).slice(0, 2), [
    event('grants_changed', { actor_id: admin.id, user_id: editor.id, detail: 'roles: [user,editor] -> [user]' }),
    event('sessions_revoked', { actor_id: admin.id, user_id: editor.id, detail: 'grant_removed: 1' })
  ])
})

t.test('a wrong current password on change-password is a failed event of the signed-in user', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const res = await changePassword(app, token, 'Wrong-Password-1', 'New-Password-2')
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'invalid_password')

  const adminToken = (await login(app, admin)).access_token
  t.strictSame(await trail(t, app, adminToken, `&user_id=${user.id}`), [
    event('password_change_failed', { outcome: 'failure', actor_id: user.id, user_id: user.id, session_id: sessionOf(token) }),
    event('login_succeeded', { actor_id: user.id, user_id: user.id, session_id: sessionOf(token) })
  ])
})
