import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, build, cookieOf, createUser, login, type CreatedUser } from '../../helper.js'
import { ISO, MISSING_ADMIN, NOT_OWNER } from '../../patterns.js'

/*
 * The /api boundary of routes/api/index.ts and its guard, plugins/guard.ts (docs/api.md#access-control) through GET /api/users/:id, which declares
 * `access: { roles: ['admin'], self: 'id' }`: token first, then the claims check, both before
 * the body is parsed or the params validated.
 */

const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }
const UNKNOWN_ID = '0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e11'

/** The whole UserResponse the API must answer for a user, read back from the store. */
async function userResponseOf (app: FastifyInstance, id: string) {
  const user = await app.store.users.findById(id)
  if (user === undefined) throw new Error(`no user ${id}`)
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    age: user.age,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    roles: user.roles,
    is_superuser: user.isSuperuser,
    email_verified: user.emailVerified
  }
}

async function readUser (app: FastifyInstance, id: string, token: string) {
  return await app.inject({ method: 'GET', url: `/api/users/${id}`, headers: authHeader(token) })
}

async function signIn (app: FastifyInstance, options: Parameters<typeof createUser>[1] = {}): Promise<CreatedUser & { token: string }> {
  const user = await createUser(app, options)
  return { ...user, token: (await login(app, user)).access_token }
}

t.test('GET /api/users/:id lets an admin read any user, whole UserResponse', async (t) => {
  const app = await build(t)
  const admin = await signIn(app, { roles: ['admin'] })
  const other = await createUser(app, { name: 'Other Person', roles: ['user', 'editor'] })
  const res = await readUser(app, other.id, admin.token)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body.created_at, ISO)
  t.match(body.updated_at, ISO)
  t.same(body, {
    id: other.id,
    email: other.email,
    name: 'Other Person',
    age: null,
    created_at: body.created_at,
    updated_at: body.updated_at,
    roles: ['user', 'editor'],
    is_superuser: false,
    email_verified: false
  })
  t.same(body, await userResponseOf(app, other.id))
})

t.test('GET /api/users/:id lets a user without the admin role read themself', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const res = await readUser(app, user.id, user.token)
  t.equal(res.statusCode, 200)
  t.same(res.json(), await userResponseOf(app, user.id))
})

t.test('GET /api/users/:id refuses a user reading another user with 403 forbidden', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const other = await createUser(app)
  const res = await readUser(app, other.id, user.token)
  t.equal(res.statusCode, 403)
  t.equal(res.headers['www-authenticate'], undefined)
  t.same(res.json(), NOT_OWNER)
})

t.test('GET /api/users/:id lets a superuser without the admin role read anyone', async (t) => {
  const app = await build(t)
  const superuser = await signIn(app, { roles: ['user'], isSuperuser: true })
  const other = await createUser(app)
  const res = await readUser(app, other.id, superuser.token)
  t.equal(res.statusCode, 200)
  t.same(res.json(), await userResponseOf(app, other.id))
})

t.test('GET /api/users/:id without a token answers 401 token_missing with a bare Bearer challenge', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}` })
  t.equal(res.statusCode, 401)
  // RFC 6750 §3.1: no error attribute when the request carried no credentials at all
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.same(res.json(), MISSING)
})

t.test('HEAD /api/users/:id (Fastify\'s automatic HEAD route) is guarded like GET', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const other = await createUser(app)
  const missing = await app.inject({ method: 'HEAD', url: `/api/users/${other.id}` })
  t.equal(missing.statusCode, 401)
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  const forbidden = await app.inject({ method: 'HEAD', url: `/api/users/${other.id}`, headers: authHeader(user.token) })
  t.equal(forbidden.statusCode, 403)
  const own = await app.inject({ method: 'HEAD', url: `/api/users/${user.id}`, headers: authHeader(user.token) })
  t.equal(own.statusCode, 200)
  t.equal(own.body, '')
})

t.test('GET /api/users/:id with another scheme than Bearer counts as no token', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: { authorization: 'Basic dXNlcjpwYXNz' } })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.same(res.json(), MISSING)
})

t.test('GET /api/users/:id with a non-UUID id answers an admin 422 naming the id field', async (t) => {
  const app = await build(t)
  const admin = await signIn(app, { roles: ['admin'] })
  const cases: [string, string[]][] = [
    ['not-a-uuid', ['The id field is invalid']],
    ['0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e1g', ['The id field is invalid']],
    ['x'.repeat(40), ['The id field must not exceed 36 characters', 'The id field is invalid']]
  ]
  for (const [id, messages] of cases) {
    const res = await readUser(app, id, admin.token)
    t.equal(res.statusCode, 422, id)
    t.same(res.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { id: messages } }, id)
  }
})

t.test('GET /api/users/:id with a non-UUID id answers a non-admin 403: the claims check runs before validation', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const res = await readUser(app, 'not-a-uuid', user.token)
  t.equal(res.statusCode, 403)
  t.same(res.json(), NOT_OWNER)
})

t.test('GET /api/users/:id with an unknown UUID answers an admin 404 not_found', async (t) => {
  const app = await build(t)
  const admin = await signIn(app, { roles: ['admin'] })
  const res = await readUser(app, UNKNOWN_ID, admin.token)
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'Not Found', message: 'User not found', code: 'not_found' })
})

t.test('PUT /api/users/:id with a broken JSON body and no token answers 401, not 400: the guard runs before parsing', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const broken = { method: 'PUT' as const, url: `/api/users/${user.id}`, headers: { 'content-type': 'application/json' }, payload: '{"name":' }
  const res = await app.inject(broken)
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.same(res.json(), MISSING)
  // the same body from the user themself does reach the parser
  const token = (await login(app, user)).access_token
  const parsed = await app.inject({ ...broken, headers: { ...broken.headers, ...authHeader(token) } })
  t.equal(parsed.statusCode, 400)
  t.equal(parsed.json().code, 'invalid_json')
})

t.test('POST /api/users with a broken JSON body from a non-admin answers 403, not 400: the claims check runs before parsing', async (t) => {
  const app = await build(t)
  const user = await signIn(app)
  const res = await app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/json', ...authHeader(user.token) }, payload: '{not json' })
  t.equal(res.statusCode, 403)
  t.same(res.json(), MISSING_ADMIN)
})

t.test('PUT /api/users/:id with a form body and no token answers 401, not 415', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const res = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=Mallory' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), MISSING)
})

t.test('GET on an unknown /api path without a token answers 404 not_found: the guard scopes routes, not the path space', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/no-such-thing' })
  t.equal(res.statusCode, 404)
  t.equal(res.headers['www-authenticate'], undefined)
  t.same(res.json(), { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' })
})

t.test('GET /api/users/:id accepts the access_token cookie of a remembered login', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { response } = await login(app, user, { remember: true })
  const cookie = cookieOf(response, 'access_token')
  t.ok(cookie, 'the login set the access_token cookie')
  const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, cookies: { access_token: cookie?.value ?? '' } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), await userResponseOf(app, user.id))
  // the claims check applies to a cookie as to a header
  const other = await createUser(app)
  const refused = await app.inject({ method: 'GET', url: `/api/users/${other.id}`, cookies: { access_token: cookie?.value ?? '' } })
  t.equal(refused.statusCode, 403)
  t.same(refused.json(), NOT_OWNER)
})

t.test('GET /api/users/:id takes the Authorization header before the cookie and does not fall back', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { response } = await login(app, user, { remember: true })
  const res = await app.inject({
    method: 'GET',
    url: `/api/users/${user.id}`,
    headers: authHeader('not-a-jwt'),
    cookies: { access_token: cookieOf(response, 'access_token')?.value ?? '' }
  })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' })
})
