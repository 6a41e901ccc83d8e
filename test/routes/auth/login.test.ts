import t from 'tap'
import { build, claimsOf, createUser, PASSWORD, tokenResponse } from '../../helper.js'
import { ISO, JWT, UUID } from '../../patterns.js'

const ACCESS_TTL_MS = 15 * 60 * 1000
const REFRESH_TTL_MS = 7 * 24 * 3600 * 1000

/** The header and payload of a compact JWS, decoded without verifying it. */
function decode (token: string): { header: Record<string, unknown>, payload: Record<string, unknown> } {
  const [header = '', payload = ''] = token.split('.')
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
  }
}

const invalidCredentials = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }

function validationFailed (errors: Record<string, string[]>) {
  return { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors }
}

t.test('POST /auth/login answers a TokenResponse with the user, uncacheable', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'root@example.com', name: 'Root User', roles: ['admin', 'user'], isSuperuser: true })
  const before = Date.now()
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: PASSWORD } })
  const after = Date.now()

  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(res.headers['set-cookie'], undefined, 'no cookies without remember')
  const body = res.json()
  t.match(body.access_token, JWT)
  t.match(body.refresh_token, JWT)
  t.not(body.access_token, body.refresh_token)
  t.match(body.expires_at, ISO)
  t.match(body.refresh_expires_at, ISO)
  t.ok(Date.parse(body.expires_at) >= before + ACCESS_TTL_MS - 2000 && Date.parse(body.expires_at) <= after + ACCESS_TTL_MS + 2000, 'expires_at is now + 15 min')
  t.ok(Date.parse(body.refresh_expires_at) >= before + REFRESH_TTL_MS - 2000 && Date.parse(body.refresh_expires_at) <= after + REFRESH_TTL_MS + 2000, 'refresh_expires_at is now + 7 days')
  t.match(body.user.created_at, ISO)
  t.equal(body.user.updated_at, body.user.created_at)
  t.equal(body.expires_in, 900, 'expires_in is the 15 min lifetime (exp − iat), exactly')
  t.equal(Date.parse(body.expires_at), (claimsOf(body.access_token).iat + body.expires_in) * 1000, 'expires_at is iat + expires_in')
  t.strictSame(body, tokenResponse(body, {
    id: user.id,
    email: 'root@example.com',
    name: 'Root User',
    age: null,
    created_at: body.user.created_at,
    updated_at: body.user.created_at,
    roles: ['admin', 'user'],
    is_superuser: true,
    email_verified: false
  }))
})

t.test('POST /auth/login issues HS256 access and refresh tokens carrying the documented claims', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'claims@example.com', roles: ['user', 'editor'] })
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: PASSWORD } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  const access = decode(body.access_token)
  const refresh = decode(body.refresh_token)

  t.strictSame(access.header, { alg: 'HS256', typ: 'at+jwt' })
  t.strictSame(refresh.header, { alg: 'HS256', typ: 'JWT' })
  for (const { payload } of [access, refresh]) {
    t.match(payload.session_id, UUID)
    t.match(payload.jti, UUID)
    t.type(payload.iat, 'number')
    t.ok(Math.abs((payload.iat as number) * 1000 - Date.now()) < 5000, 'iat is now')
  }
  t.equal(access.payload.session_id, refresh.payload.session_id, 'both tokens belong to one session')
  t.not(access.payload.jti, refresh.payload.jti, 'each token has its own jti')
  const common = {
    user_id: user.id,
    email: 'claims@example.com',
    roles: ['user', 'editor'],
    session_id: access.payload.session_id,
    is_superuser: false,
    sub: user.id,
    iat: access.payload.iat,
    iss: 'gatehouse',
    aal: 'aal1',
    amr: ['pwd'],
    auth_time: access.payload.iat
  }
  t.strictSame(access.payload, { ...common, type: 'access', exp: (access.payload.iat as number) + 900, jti: access.payload.jti })
  t.strictSame(refresh.payload, { ...common, type: 'refresh', exp: (access.payload.iat as number) + 604800, jti: refresh.payload.jti })
  t.equal(Date.parse(body.expires_at), (access.payload.exp as number) * 1000, 'expires_at is the access token exp')
  t.equal(Date.parse(body.refresh_expires_at), (refresh.payload.exp as number) * 1000, 'refresh_expires_at is the refresh token exp')
})

t.test('POST /auth/login trims the email and compares it case-insensitively', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'user@example.com' })
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: '  USER@Example.com ', password: PASSWORD } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.user.id, user.id)
  t.equal(body.user.email, 'user@example.com')
  t.equal(decode(body.access_token).payload.email, 'user@example.com')
})

t.test('POST /api/auth/login signs in without a token, like /auth/login', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'api@example.com' })
  const before = Date.now()
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: PASSWORD } })
  const after = Date.now()
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json()
  t.match(body.access_token, JWT)
  t.match(body.refresh_token, JWT)
  t.match(body.expires_at, ISO)
  t.match(body.refresh_expires_at, ISO)
  t.equal(body.expires_in, 900, 'expires_in is the 15 min lifetime (exp − iat), exactly')
  // exp = the whole second of signing + 900 s: within the second before the request and the answer
  t.ok(Date.parse(body.expires_at) > before - 1000 + 900_000 && Date.parse(body.expires_at) <= after + 900_000, 'expires_at is the signing second + 15 min')
  t.strictSame(body, tokenResponse(body, {
    id: user.id,
    email: 'api@example.com',
    name: 'Test User',
    age: null,
    created_at: body.user.created_at,
    updated_at: body.user.updated_at,
    roles: ['user'],
    is_superuser: false,
    email_verified: false
  }))
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${body.access_token}` } })
  t.equal(me.statusCode, 200, 'the token it issued is a working access token')
})

t.test('POST /auth/login answers an unknown email and a wrong password identically', async (t) => {
  const app = await build(t)
  await createUser(app, { email: 'known@example.com' })
  const unknown = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'nobody@example.com', password: PASSWORD } })
  const wrong = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'known@example.com', password: 'Wrong-Horse-9' } })

  t.equal(unknown.statusCode, 401)
  t.equal(wrong.statusCode, 401)
  t.strictSame(unknown.json(), invalidCredentials)
  t.equal(wrong.body, unknown.body, 'byte-identical bodies')
  for (const header of ['content-type', 'content-length', 'www-authenticate', 'set-cookie', 'cache-control']) {
    t.equal(wrong.headers[header], unknown.headers[header], `same ${header}`)
  }
})

t.test('POST /auth/login rejects invalid bodies with the field map', async (t) => {
  const cases: { name: string, payload: unknown, errors: Record<string, string[]> }[] = [
    {
      name: 'both fields missing',
      payload: {},
      errors: { email: ['The email field is required'], password: ['The password field is required'] }
    },
    {
      name: 'a blank email',
      payload: { email: '   ', password: PASSWORD },
      errors: { email: ['The email field is required'] }
    },
    {
      name: 'an invalid email',
      payload: { email: 'not-an-email', password: PASSWORD },
      errors: { email: ['The email field must be a valid email address'] }
    },
    {
      name: 'an unknown property',
      payload: { email: 'user@example.com', password: PASSWORD, roles: ['admin'] },
      errors: { roles: ['The roles field is invalid'] }
    },
    {
      name: 'a remember that is not a boolean',
      payload: { email: 'user@example.com', password: PASSWORD, remember: 'yes' },
      errors: { remember: ['The remember field is invalid'] }
    },
    {
      name: 'a password over 1024 characters',
      payload: { email: 'user@example.com', password: 'x'.repeat(1025) },
      errors: { password: ['The password field must not exceed 1024 characters'] }
    },
    {
      name: 'a JSON array',
      payload: [{ email: 'user@example.com', password: PASSWORD }],
      errors: { body: ['The body field is invalid'] }
    }
  ]
  for (const { name, payload, errors } of cases) {
    t.test(name, async (t) => {
      const app = await build(t)
      const res = await app.inject({ method: 'POST', url: '/auth/login', payload: payload as object })
      t.equal(res.statusCode, 422)
      t.strictSame(res.json(), validationFailed(errors))
    })
  }
})

t.test('POST /auth/login reports every failing field together', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'nope', remember: 1, is_superuser: true } })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), validationFailed({
    email: ['The email field must be a valid email address'],
    password: ['The password field is required'],
    remember: ['The remember field is invalid'],
    is_superuser: ['The is_superuser field is invalid']
  }))
})

t.test('POST /auth/login without a body lists email and password as required', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/auth/login' })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), validationFailed({ email: ['The email field is required'], password: ['The password field is required'] }))
})
