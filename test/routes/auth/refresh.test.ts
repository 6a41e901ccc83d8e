// Proves routes/auth/session.ts (POST /auth/refresh).
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t from 'tap'
import { authHeader, build, createUser, login, rawSql, tokenResponse } from '../../helper.js'
import { ISO, JWT } from '../../patterns.js'

function payloadOf (token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>
}

async function refresh (app: FastifyInstance, token: unknown) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token } })
}

async function me (app: FastifyInstance, accessToken: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(accessToken) })
}

function challenge (message: string): string {
  return `Bearer realm="gatehouse", error="invalid_token", error_description="${message}"`
}

const tokenInvalid = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const tokenRevoked = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }
const refreshReused = { error: 'Unauthorized', message: 'The refresh token was already used; the session has been revoked', code: 'refresh_token_reused' }
const refreshRequired = {
  error: 'Validation failed',
  message: 'The given data was invalid',
  code: 'validation_failed',
  errors: { refresh_token: ['The refresh_token field is required'] }
}

t.test('POST /auth/refresh rotates the refresh token and answers a new pair in the same session', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { email: 'rotate@example.com' })
  const first = await login(app, user)
  const asked = Date.now()
  const res = await refresh(app, first.refresh_token)
  const answered = Date.now()

  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['set-cookie'], undefined, 'a token from the body gets no cookies')
  const body = res.json()
  t.match(body.access_token, JWT)
  t.match(body.refresh_token, JWT)
  t.not(body.refresh_token, first.refresh_token, 'a new refresh token')
  t.not(body.access_token, first.access_token, 'a new access token')
  t.match(body.expires_at, ISO)
  t.match(body.refresh_expires_at, ISO)
  t.equal(body.expires_in, 900, 'expires_in is the access lifetime (exp − iat), exactly')
  t.ok(Date.parse(body.expires_at) > asked - 1000 + 900_000 && Date.parse(body.expires_at) <= answered + 900_000, 'expires_at is the signing second + 15 min')
  t.match(body.user.created_at, ISO)
  t.strictSame(body, tokenResponse(body, {
    id: user.id,
    email: 'rotate@example.com',
    name: 'Test User',
    age: null,
    created_at: body.user.created_at,
    updated_at: body.user.updated_at,
    roles: ['user'],
    is_superuser: false,
    email_verified: false
  }))
  const before = payloadOf(first.refresh_token)
  const after = payloadOf(body.refresh_token)
  t.equal(after.session_id, before.session_id, 'the session continues')
  t.equal(payloadOf(body.access_token).session_id, before.session_id)
  t.not(after.jti, before.jti)
  t.equal(after.type, 'refresh')
  t.equal(payloadOf(body.access_token).type, 'access')
})

t.test('POST /auth/refresh hands out a refresh token that refreshes and an access token that works', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const first = await login(app, user)
  const second = (await refresh(app, first.refresh_token)).json()

  const meRes = await me(app, second.access_token)
  t.equal(meRes.statusCode, 200)
  t.equal(meRes.json().id, user.id)

  const third = await refresh(app, second.refresh_token)
  t.equal(third.statusCode, 200)
  t.not(third.json().refresh_token, second.refresh_token)
  t.equal((await me(app, third.json().access_token)).statusCode, 200)
})

t.test('POST /auth/refresh with the just-spent token within the grace interval answers the same successor', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { refresh_token: spent } = await login(app, user)
  const first = await refresh(app, spent)
  const second = await refresh(app, spent)

  t.equal(first.statusCode, 200)
  t.equal(second.statusCode, 200)
  const a = first.json()
  const b = second.json()
  t.equal(b.refresh_token, a.refresh_token, 'both callers end on one chain')
  t.match(b.access_token, JWT)
  t.equal(payloadOf(b.access_token).session_id, payloadOf(a.access_token).session_id)
  t.strictSame({ ...b, access_token: '', expires_at: '', expires_in: 0 }, { ...a, access_token: '', expires_at: '', expires_in: 0 })

  const meRes = await me(app, b.access_token)
  t.equal(meRes.statusCode, 200, 'the access token of the second answer works')
  t.equal((await refresh(app, a.refresh_token)).statusCode, 200, 'the shared successor still refreshes')
})

t.test('POST /auth/refresh with two racing requests for one token ends both on one chain', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { refresh_token: token } = await login(app, user)
  const [a, b] = await Promise.all([refresh(app, token), refresh(app, token)])
  t.equal(a.statusCode, 200)
  t.equal(b.statusCode, 200)
  t.equal(a.json().refresh_token, b.json().refresh_token)
  t.equal((await me(app, a.json().access_token)).statusCode, 200)
  t.equal((await me(app, b.json().access_token)).statusCode, 200)
})

t.test('POST /auth/refresh with a spent token after the grace interval revokes the session', async (t) => {
  const app = await build(t, { REFRESH_REUSE_INTERVAL: '1s' })
  const user = await createUser(app)
  const { refresh_token: spent } = await login(app, user)
  const latest = (await refresh(app, spent)).json()
  await sleep(1200)

  const reused = await refresh(app, spent)
  t.equal(reused.statusCode, 401)
  t.strictSame(reused.json(), refreshReused)
  t.equal(reused.headers['www-authenticate'], challenge(refreshReused.message))

  const meRes = await me(app, latest.access_token)
  t.equal(meRes.statusCode, 401, 'the latest access token is refused')
  t.strictSame(meRes.json(), tokenRevoked)
  t.equal(meRes.headers['www-authenticate'], challenge(tokenRevoked.message))

  const again = await refresh(app, latest.refresh_token)
  t.equal(again.statusCode, 401, 'the latest refresh token no longer refreshes')
  t.strictSame(again.json(), tokenRevoked)
})

t.test('POST /auth/refresh with a token spent two rotations ago is theft even within the grace interval', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const { refresh_token: oldest } = await login(app, user)
  const middle = (await refresh(app, oldest)).json()
  const latest = (await refresh(app, middle.refresh_token)).json()

  const reused = await refresh(app, oldest)
  t.equal(reused.statusCode, 401)
  t.strictSame(reused.json(), refreshReused)
  t.equal((await me(app, latest.access_token)).statusCode, 401)
  t.strictSame((await refresh(app, latest.refresh_token)).json(), tokenRevoked)
})

t.test('POST /auth/refresh without a token asks for refresh_token', async (t) => {
  const app = await build(t)
  for (const [name, payload] of [['an empty object', {}], ['an empty string', { refresh_token: '' }], ['only spaces', { refresh_token: '  ' }]] as const) {
    const res = await app.inject({ method: 'POST', url: '/auth/refresh', payload })
    t.equal(res.statusCode, 422, name)
    t.strictSame(res.json(), refreshRequired, name)
  }
  const noBody = await app.inject({ method: 'POST', url: '/auth/refresh' })
  t.equal(noBody.statusCode, 422, 'no body at all')
  t.strictSame(noBody.json(), refreshRequired)
})

t.test('POST /auth/refresh refuses an access token, garbage and a foreign signature as token_invalid', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const tokens = await login(app, user)
  const [header, payload] = tokens.refresh_token.split('.')
  const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`
  for (const [name, token] of [['an access token', tokens.access_token], ['garbage', 'garbage'], ['a forged signature', forged]] as const) {
    const res = await refresh(app, token)
    t.equal(res.statusCode, 401, name)
    t.strictSame(res.json(), tokenInvalid, name)
    t.equal(res.headers['www-authenticate'], challenge(tokenInvalid.message), name)
  }
  t.equal((await refresh(app, tokens.refresh_token)).statusCode, 200, 'the session was not harmed')
})

t.test('POST /auth/refresh refuses a refresh_token that is not a string', async (t) => {
  const app = await build(t)
  const res = await refresh(app, 42)
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), { ...refreshRequired, errors: { refresh_token: ['The refresh_token field is invalid'] } })
})

t.test('POST /auth/refresh re-reads the user, so a role granted in between is carried', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { roles: ['user'] })
  const tokens = await login(app, user)
  await rawSql(app.config, sql`update users set roles = ${JSON.stringify(['user', 'editor'])} where id = ${user.id}`)

  const res = await refresh(app, tokens.refresh_token)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.strictSame(body.user.roles, ['user', 'editor'])
  t.strictSame(payloadOf(body.access_token).roles, ['user', 'editor'])
  t.strictSame(payloadOf(body.refresh_token).roles, ['user', 'editor'])
  t.equal((await me(app, tokens.access_token)).statusCode, 200, 'granting revokes nothing')
})
