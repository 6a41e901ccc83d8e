import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { authHeader, build, createUser, login, type CreatedUser } from '../../helper.js'
import { FORBIDDEN, ISO, NOT_FOUND, UUID } from '../../patterns.js'

interface Actors { app: FastifyInstance, admin: CreatedUser, adminToken: string, user: CreatedUser, userToken: string, rootToken: string }

/**
 * Users made within one millisecond tie on created_at and are listed by their random ids; the
 * listing tests expect the order they were made in, so each is made in a millisecond of its own.
 */
async function nextMillisecond (): Promise<void> {
  const made = Date.now()
  while (Date.now() === made) await sleep(1)
}

async function actors (t: Test): Promise<Actors> {
  const app = await build(t)
  const admin = await createUser(app, { email: 'admin@example.com', roles: ['admin'] })
  await nextMillisecond()
  const user = await createUser(app, { email: 'user@example.com' })
  await nextMillisecond()
  const root = await createUser(app, { email: 'root@example.com', roles: [], isSuperuser: true })
  return {
    app,
    admin,
    user,
    adminToken: (await login(app, admin)).access_token,
    userToken: (await login(app, user)).access_token,
    rootToken: (await login(app, root)).access_token
  }
}

/** The dynamic fields of a UserResponse are checked by shape; the rest is returned for t.same. */
function stable (t: Test, user: Record<string, unknown>): Record<string, unknown> {
  const { id, created_at: createdAt, updated_at: updatedAt, ...rest } = user
  t.match(id, UUID)
  t.match(createdAt, ISO)
  t.match(updatedAt, ISO)
  return rest
}

t.test('POST /api/users as admin creates the user: 201, Location and the UserResponse', async (t) => {
  const { app, adminToken } = await actors(t)
  const res = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(adminToken),
    payload: { email: '  New.Person@Example.COM ', password: 'long-enough', name: 'New Person', age: 30 }
  })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.equal(res.headers.location, `/api/users/${body.id}`)
  t.same(stable(t, body), { email: 'new.person@example.com', name: 'New Person', age: 30, roles: ['user'], is_superuser: false, email_verified: false })
  t.notOk('password_hash' in body || 'passwordHash' in body, 'no hash in the response')

  const again = await app.inject({ method: 'GET', url: res.headers.location as string, headers: authHeader(adminToken) })
  t.same(again.json(), body, 'what was written is read back')
})

t.test('POST /api/users with a taken email (any case) answers 400 email_taken and writes nothing', async (t) => {
  const { app, adminToken } = await actors(t)
  const res = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(adminToken),
    payload: { email: 'USER@example.com', password: 'long-enough', name: 'Dup' }
  })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'Bad Request', message: 'The email has already been taken', code: 'email_taken' })
  const list = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(adminToken) })
  t.equal(list.json().pagination.total, 3)
})

t.test('POST /api/users grants: roles from an admin, is_superuser only from a superuser', async (t) => {
  const { app, adminToken, rootToken } = await actors(t)
  const withRoles = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(adminToken),
    payload: { email: 'editor@example.com', password: 'long-enough', name: 'Ed', roles: ['editor', 'user'] }
  })
  t.equal(withRoles.statusCode, 201)
  t.same(withRoles.json().roles, ['editor', 'user'])

  const adminSuper = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(adminToken),
    payload: { email: 'boss@example.com', password: 'long-enough', name: 'Boss', is_superuser: true }
  })
  t.equal(adminSuper.statusCode, 403)
  t.same(adminSuper.json(), FORBIDDEN)

  const rootSuper = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(rootToken),
    payload: { email: 'boss@example.com', password: 'long-enough', name: 'Boss', is_superuser: true }
  })
  t.equal(rootSuper.statusCode, 201)
  t.equal(rootSuper.json().is_superuser, true)
})

t.test('POST /api/users by a plain user is refused before the body is read', async (t) => {
  const { app, userToken } = await actors(t)
  const res = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: { ...authHeader(userToken), 'content-type': 'application/json' },
    payload: '{not json'
  })
  t.equal(res.statusCode, 403)
  t.same(res.json(), FORBIDDEN)
})

t.test('POST /api/users reports every invalid field at once', async (t) => {
  const { app, adminToken } = await actors(t)
  const res = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(adminToken),
    payload: { email: 'nope', password: 'short', name: 'X', age: 17, roles: ['Bad Role'], extra: 1 }
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: {
      email: ['The email field must be a valid email address'],
      password: ['The password field must be at least 8 characters'],
      name: ['The name field must be at least 2 characters'],
      age: ['The age field must be at least 18'],
      'roles.0': ['The roles.0 field is invalid'],
      extra: ['The extra field is invalid']
    }
  })
})

t.test('GET /api/users pages oldest first with the seed formulas', async (t) => {
  const { app, adminToken } = await actors(t)
  for (let i = 0; i < 4; i++) {
    await nextMillisecond()
    await createUser(app, { email: `extra${i}@example.com` })
  }
  const res = await app.inject({ method: 'GET', url: '/api/users?page=2&per_page=3', headers: authHeader(adminToken) })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(body.pagination, { current_page: 2, per_page: 3, total: 7, last_page: 3, from: 4, to: 6 })
  t.same(body.data.map((u: { email: string }) => u.email), ['extra0@example.com', 'extra1@example.com', 'extra2@example.com'])

  const last = await app.inject({ method: 'GET', url: '/api/users?page=3&per_page=3', headers: authHeader(adminToken) })
  t.same(last.json().pagination, { current_page: 3, per_page: 3, total: 7, last_page: 3, from: 7, to: 9 }, 'to is page*per_page, as written')
  t.equal(last.json().data.length, 1)

  const defaults = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(adminToken) })
  t.same(defaults.json().pagination, { current_page: 1, per_page: 15, total: 7, last_page: 1, from: 1, to: 15 })
  t.same(defaults.json().data.map((u: { email: string }) => u.email).slice(0, 3), ['admin@example.com', 'user@example.com', 'root@example.com'])
})

t.test('GET /api/users with an invalid page or per_page answers 422', async (t) => {
  const { app, adminToken } = await actors(t)
  const cases: Array<[string, Record<string, string[]>]> = [
    ['page=0', { page: ['The page field must be at least 1'] }],
    ['per_page=101', { per_page: ['The per_page field must not exceed 100'] }],
    ['per_page=0&page=x', { page: ['The page field is invalid'], per_page: ['The per_page field must be at least 1'] }],
    ['page=0&sort=name', { page: ['The page field must be at least 1'] }]
  ]
  for (const [query, errors] of cases) {
    const res = await app.inject({ method: 'GET', url: `/api/users?${query}`, headers: authHeader(adminToken) })
    t.equal(res.statusCode, 422, query)
    t.same(res.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors }, query)
  }
})

t.test('GET /api/users ignores query parameters it does not know (a cache-buster, a sort it does not offer)', async (t) => {
  const { app, adminToken } = await actors(t)
  const plain = await app.inject({ method: 'GET', url: '/api/users?per_page=2', headers: authHeader(adminToken) })
  t.equal(plain.statusCode, 200)
  for (const query of ['_=123', 'sort=name', 'sort=name&_=1&page=1']) {
    const res = await app.inject({ method: 'GET', url: `/api/users?per_page=2&${query}`, headers: authHeader(adminToken) })
    t.equal(res.statusCode, 200, query)
    t.same(res.json(), plain.json(), query)
  }
})

t.test('GET /api/users is for admins and superusers only', async (t) => {
  const { app, userToken, rootToken } = await actors(t)
  const asUser = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(userToken) })
  t.equal(asUser.statusCode, 403)
  t.same(asUser.json(), FORBIDDEN)
  const asRoot = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(rootToken) })
  t.equal(asRoot.statusCode, 200)
})

t.test('GET /api/users answers 500 without internals when the database fails', async (t) => {
  const { app, adminToken } = await actors(t)
  t.intercept(app.store.users, 'list', { value: async () => { throw new Error('SQLITE_IOERR: disk I/O error at /secret/path') } })
  const res = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(adminToken) })
  t.equal(res.statusCode, 500)
  const body = res.json()
  t.match(body.request_id, UUID)
  t.same(body, { error: 'Internal Server Error', message: 'An unexpected error occurred', code: 'internal_error', request_id: body.request_id })
  t.notMatch(res.body, /SQLITE|secret|stack/)
})

t.test('PUT /api/users/:id lets a user change their own name and age but not their roles', async (t) => {
  const { app, user, userToken } = await actors(t)
  const res = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(userToken), payload: { name: 'Renamed', age: 40 } })
  t.equal(res.statusCode, 200)
  t.same(stable(t, res.json()), { email: 'user@example.com', name: 'Renamed', age: 40, roles: ['user'], is_superuser: false, email_verified: false })

  const roles = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(userToken), payload: { roles: ['admin'] } })
  t.equal(roles.statusCode, 403)
  t.same(roles.json(), FORBIDDEN)
  const superuser = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(userToken), payload: { is_superuser: true } })
  t.equal(superuser.statusCode, 403)
  const unchanged = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(userToken) })
  t.same(unchanged.json().roles, ['user'], 'a refused grant writes nothing')
})

t.test('PUT /api/users/:id on another user is refused to a plain user', async (t) => {
  const { app, admin, userToken } = await actors(t)
  const res = await app.inject({ method: 'PUT', url: `/api/users/${admin.id}`, headers: authHeader(userToken), payload: { name: 'Hacked' } })
  t.equal(res.statusCode, 403)
  t.same(res.json(), FORBIDDEN)
})

t.test('PUT /api/users/:id: non-UUID id → 422, unknown id → 404, bad body → 422', async (t) => {
  const { app, adminToken } = await actors(t)
  const bad = await app.inject({ method: 'PUT', url: '/api/users/123', headers: authHeader(adminToken), payload: { name: 'Valid' } })
  t.equal(bad.statusCode, 422)
  t.same(bad.json().errors, { id: ['The id field is invalid'] })
  const missing = await app.inject({ method: 'PUT', url: '/api/users/00000000-0000-4000-8000-000000000000', headers: authHeader(adminToken), payload: { name: 'Valid' } })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), NOT_FOUND)
  const body = await app.inject({ method: 'PUT', url: '/api/users/00000000-0000-4000-8000-000000000000', headers: authHeader(adminToken), payload: { name: 'x'.repeat(101), age: '20', email: 'a@b.c' } })
  t.equal(body.statusCode, 422)
  t.same(body.json().errors, {
    name: ['The name field must not exceed 100 characters'],
    age: ['The age field is invalid'],
    email: ['The email field is invalid']
  })
})

t.test('removing a role revokes the user\'s sessions at once; granting one shows in the next refresh', async (t) => {
  const { app, admin, adminToken } = await actors(t)
  const editor = await createUser(app, { email: 'editor@example.com', roles: ['user', 'editor'] })
  const session = await login(app, editor)

  const grant = await app.inject({ method: 'PUT', url: `/api/users/${editor.id}`, headers: authHeader(adminToken), payload: { roles: ['user', 'editor', 'admin'] } })
  t.equal(grant.statusCode, 200)
  const stillValid = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(session.access_token) })
  t.equal(stillValid.statusCode, 200, 'granting revokes nothing')
  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: session.refresh_token } })
  t.equal(refreshed.statusCode, 200)
  const claims = JSON.parse(Buffer.from(refreshed.json().access_token.split('.')[1], 'base64url').toString())
  t.same(claims.roles, ['user', 'editor', 'admin'], 'the next refresh carries the new role')
  const adminNow = await app.inject({ method: 'GET', url: `/api/users/${admin.id}`, headers: authHeader(refreshed.json().access_token) })
  t.equal(adminNow.statusCode, 200)

  const removal = await app.inject({ method: 'PUT', url: `/api/users/${editor.id}`, headers: authHeader(adminToken), payload: { roles: ['user'] } })
  t.equal(removal.statusCode, 200)
  const old = await app.inject({ method: 'GET', url: `/api/users/${admin.id}`, headers: authHeader(refreshed.json().access_token) })
  t.equal(old.statusCode, 401)
  t.same(old.json(), { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' })
  const refreshAgain = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshed.json().refresh_token } })
  t.equal(refreshAgain.statusCode, 401)
  t.equal(refreshAgain.json().code, 'token_revoked')
})

t.test('taking is_superuser away (by a superuser) revokes that user\'s sessions', async (t) => {
  const { app, rootToken } = await actors(t)
  const boss = await createUser(app, { email: 'boss@example.com', roles: [], isSuperuser: true })
  const session = await login(app, boss)
  const res = await app.inject({ method: 'PUT', url: `/api/users/${boss.id}`, headers: authHeader(rootToken), payload: { is_superuser: false } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().is_superuser, false)
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(session.access_token) })
  t.equal(me.statusCode, 401)
  t.equal(me.json().code, 'token_revoked')
})

t.test('an admin cannot change a superuser\'s roles or delete a superuser', async (t) => {
  const { app, adminToken } = await actors(t)
  const boss = await createUser(app, { email: 'boss@example.com', roles: ['admin'], isSuperuser: true })
  const roles = await app.inject({ method: 'PUT', url: `/api/users/${boss.id}`, headers: authHeader(adminToken), payload: { roles: [] } })
  t.equal(roles.statusCode, 403)
  const del = await app.inject({ method: 'DELETE', url: `/api/users/${boss.id}`, headers: authHeader(adminToken) })
  t.equal(del.statusCode, 403)
  t.same(del.json(), FORBIDDEN)
})

t.test('DELETE /api/users/:id removes the user and refuses their tokens at once', async (t) => {
  const { app, user, adminToken, userToken } = await actors(t)
  const session = await login(app, user)
  const res = await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  for (const token of [userToken, session.access_token]) {
    const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
    t.equal(me.statusCode, 401)
    t.equal(me.json().code, 'token_revoked')
  }
  const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: session.refresh_token } })
  t.equal(refresh.statusCode, 401)
  t.equal(refresh.json().code, 'token_revoked')
  const gone = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })
  t.equal(gone.statusCode, 404)
  const again = await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })
  t.equal(again.statusCode, 404)
  t.same(again.json(), NOT_FOUND)
  const relogin = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(relogin.statusCode, 401)
})

t.test('DELETE /api/users/:id is for admins only', async (t) => {
  const { app, admin, user, userToken } = await actors(t)
  for (const id of [admin.id, user.id]) {
    const res = await app.inject({ method: 'DELETE', url: `/api/users/${id}`, headers: authHeader(userToken) })
    t.equal(res.statusCode, 403)
    t.same(res.json(), FORBIDDEN)
  }
})

t.test('a cookie-authenticated PUT needs a trusted Origin (CSRF)', async (t) => {
  const { app, user } = await actors(t)
  const session = await login(app, user, { remember: true })
  const cookie = `access_token=${session.access_token}`
  const foreign = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { cookie, origin: 'https://evil.example' }, payload: { name: 'Evil' } })
  t.equal(foreign.statusCode, 403)
  t.same(foreign.json(), { error: 'Forbidden', message: 'Cross-origin request rejected', code: 'csrf_rejected' })
  const none = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { cookie }, payload: { name: 'Evil' } })
  t.equal(none.statusCode, 403)
  const own = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { cookie, origin: 'http://localhost:80' }, payload: { name: 'Fine' } })
  t.equal(own.statusCode, 200)
  t.equal(own.json().name, 'Fine')
})
