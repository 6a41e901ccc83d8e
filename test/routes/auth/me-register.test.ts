// Proves routes/auth/session.ts (GET /auth/me, POST /auth/register).
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login, PASSWORD, tokenResponse } from '../../helper.js'
import { ISO, JWT, UUID } from '../../patterns.js'

const tokenMissing = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }
const tokenInvalid = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const registrationDisabled = { error: 'Forbidden', message: 'Registration is disabled', code: 'registration_disabled', reason: 'registration_disabled' }
const emailTaken = { error: 'Bad Request', message: 'The email has already been taken', code: 'email_taken' }

function validationFailed (errors: Record<string, string[]>) {
  return { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors }
}

function payloadOf (token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>
}

async function register (app: FastifyInstance, payload: unknown) {
  return await app.inject({ method: 'POST', url: '/auth/register', payload: payload as object })
}

const account = { email: 'new@example.com', password: PASSWORD, name: 'New Person', age: 30 }

t.test('GET /auth/me answers the signed-in user', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'me@example.com', name: 'Me Myself', roles: ['admin', 'user'], isSuperuser: true })
  const { access_token: token } = await login(app, user)
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body.created_at, ISO)
  t.match(body.updated_at, ISO)
  t.strictSame(body, {
    id: user.id,
    email: 'me@example.com',
    name: 'Me Myself',
    age: null,
    created_at: body.created_at,
    updated_at: body.updated_at,
    roles: ['admin', 'user'],
    is_superuser: true,
    email_verified: false
  })
})

t.test('GET /auth/me without a token is token_missing with a bare Bearer challenge', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/auth/me' })
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), tokenMissing)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
})

t.test('GET /auth/me with a bad token is token_invalid with an invalid_token challenge', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const [header, payload] = token.split('.')
  const forged = `${header}.${payload}.${Buffer.from('forged').toString('base64url')}`
  for (const [name, authorization] of [['garbage', 'Bearer garbage'], ['a forged signature', `Bearer ${forged}`]] as const) {
    const res = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization } })
    t.equal(res.statusCode, 401, name)
    t.strictSame(res.json(), tokenInvalid, name)
    t.match(res.headers['www-authenticate'], /^Bearer realm="gatehouse", .*error="invalid_token"/, name)
  }
})

t.test('GET /auth/me refuses a refresh token presented as Bearer', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { refresh_token: token } = await login(app, user)
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), tokenInvalid)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token is invalid"')
})

t.test('POST /auth/register is registration_disabled by default, whatever the body', async (t) => {
  const app = await build(t)
  const requests = [
    { name: 'a valid body', payload: JSON.stringify(account), type: 'application/json' },
    { name: 'invalid JSON', payload: '{"email":', type: 'application/json' },
    { name: 'text/plain', payload: 'email=a@b.c', type: 'text/plain' },
    { name: 'an invalid body', payload: JSON.stringify({ roles: ['admin'] }), type: 'application/json' }
  ]
  for (const { name, payload, type } of requests) {
    const res = await app.inject({ method: 'POST', url: '/auth/register', payload, headers: { 'content-type': type } })
    t.equal(res.statusCode, 403, name)
    t.strictSame(res.json(), registrationDisabled, name)
  }
  const noBody = await app.inject({ method: 'POST', url: '/auth/register' })
  t.equal(noBody.statusCode, 403, 'no body')
  t.strictSame(noBody.json(), registrationDisabled)
  t.equal(await app.store.users.findByEmail('new@example.com'), undefined, 'no account was created')
})

t.test('POST /auth/register, when enabled, creates the account with DEFAULT_ROLES and signs it in', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const before = Date.now()
  const res = await register(app, account)
  const after = Date.now()
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json()
  t.match(body.access_token, JWT)
  t.match(body.refresh_token, JWT)
  t.match(body.expires_at, ISO)
  t.match(body.refresh_expires_at, ISO)
  t.match(body.user.id, UUID)
  t.match(body.user.created_at, ISO)
  t.equal(body.expires_in, 900, 'expires_in is the access lifetime (exp − iat), exactly')
  // exp = the whole second of signing + 900 s: within the second before the request and the answer
  t.ok(Date.parse(body.expires_at) > before - 1000 + 900_000 && Date.parse(body.expires_at) <= after + 900_000, 'expires_at is the signing second + 15 min')
  t.strictSame(body, tokenResponse(body, {
    id: body.user.id,
    email: 'new@example.com',
    name: 'New Person',
    age: 30,
    created_at: body.user.created_at,
    updated_at: body.user.created_at,
    roles: ['user'],
    is_superuser: false,
    email_verified: false
  }))
  t.strictSame(payloadOf(body.access_token).roles, ['user'])
  t.equal(payloadOf(body.access_token).is_superuser, false)

  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(body.access_token) })
  t.equal(me.statusCode, 200)
  t.strictSame(me.json(), body.user)
  const again = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'new@example.com', password: PASSWORD } })
  t.equal(again.statusCode, 200, 'the new account can sign in with its password')
})

t.test('POST /auth/register gives the roles of DEFAULT_ROLES', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true, DEFAULT_ROLES: 'member,reader' })
  const { age: _age, ...withoutAge } = account
  const res = await register(app, { ...withoutAge, email: '  Reader@Example.COM ' })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.strictSame(body.user, {
    id: body.user.id,
    email: 'reader@example.com',
    name: 'New Person',
    age: null,
    created_at: body.user.created_at,
    updated_at: body.user.updated_at,
    roles: ['member', 'reader'],
    is_superuser: false,
    email_verified: false
  })
  t.strictSame(payloadOf(body.refresh_token).roles, ['member', 'reader'])
})

t.test('POST /auth/register with a taken email, in any case, is email_taken', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  await createUser(app, { email: 'taken@example.com' })
  for (const email of ['taken@example.com', 'TAKEN@Example.com', ' taken@example.com ']) {
    const res = await register(app, { ...account, email })
    t.equal(res.statusCode, 400, email)
    t.strictSame(res.json(), emailTaken, email)
  }
})

t.test('POST /auth/register refuses roles and is_superuser in the body', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const res = await register(app, { ...account, roles: ['admin'], is_superuser: true })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), validationFailed({ roles: ['The roles field is invalid'], is_superuser: ['The is_superuser field is invalid'] }))
  t.equal(await app.store.users.findByEmail('new@example.com'), undefined, 'no account was created')
})

t.test('POST /auth/register validates each field', async (t) => {
  const cases: { name: string, change: Record<string, unknown>, errors: Record<string, string[]> }[] = [
    { name: 'a name too short', change: { name: 'A' }, errors: { name: ['The name field must be at least 2 characters'] } },
    { name: 'a name too long', change: { name: 'x'.repeat(101) }, errors: { name: ['The name field must not exceed 100 characters'] } },
    { name: 'a blank name', change: { name: '    ' }, errors: { name: ['The name field is required'] } },
    { name: 'age 17', change: { age: 17 }, errors: { age: ['The age field must be at least 18'] } },
    { name: 'age 121', change: { age: 121 }, errors: { age: ['The age field must not exceed 120'] } },
    { name: 'age as a string', change: { age: '20' }, errors: { age: ['The age field is invalid'] } },
    { name: 'a fractional age', change: { age: 20.5 }, errors: { age: ['The age field is invalid'] } },
    { name: 'a short password', change: { password: 'Ab1!' }, errors: { password: ['The password field must be at least 8 characters'] } },
    { name: 'an invalid email', change: { email: 'new.example.com' }, errors: { email: ['The email field must be a valid email address'] } }
  ]
  for (const { name, change, errors } of cases) {
    t.test(name, async (t) => {
      const app = await build(t, { ENABLE_REGISTER: true })
      const res = await register(app, { ...account, ...change })
      t.equal(res.statusCode, 422)
      t.strictSame(res.json(), validationFailed(errors))
    })
  }
})

t.test('POST /auth/register accepts the bounds of name and age', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const low = await register(app, { ...account, email: 'low@example.com', name: 'Al', age: 18 })
  t.equal(low.statusCode, 201)
  const high = await register(app, { ...account, email: 'high@example.com', name: 'x'.repeat(100), age: 120 })
  t.equal(high.statusCode, 201)
  t.equal(high.json().user.age, 120)
})

t.test('POST /auth/register reports all failing fields together', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const res = await register(app, { email: 'nope', password: 'short', name: 'A', age: 17, roles: ['admin'] })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), validationFailed({
    email: ['The email field must be a valid email address'],
    password: ['The password field must be at least 8 characters'],
    name: ['The name field must be at least 2 characters'],
    age: ['The age field must be at least 18'],
    roles: ['The roles field is invalid']
  }))

  const empty = await register(app, {})
  t.equal(empty.statusCode, 422)
  t.strictSame(empty.json(), validationFailed({
    email: ['The email field is required'],
    password: ['The password field is required'],
    name: ['The name field is required']
  }))
})
