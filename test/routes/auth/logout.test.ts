// Proves routes/auth/session.ts (POST /auth/logout).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, cookieOf, createUser, login } from '../../helper.js'

const tokenRevoked = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }
const tokenMissing = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }

async function me (app: FastifyInstance, accessToken: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(accessToken) })
}

async function refresh (app: FastifyInstance, refreshToken: string) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } })
}

async function logout (app: FastifyInstance, accessToken: string, scope?: string) {
  const url = scope === undefined ? '/auth/logout' : `/auth/logout?scope=${scope}`
  return await app.inject({ method: 'POST', url, headers: authHeader(accessToken) })
}

/** 204, no body, and both cookies cleared on the paths they were set on. */
function assertSignedOut (t: Test, res: LightMyRequestResponse): void {
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal(res.headers['content-type'], undefined)
  t.equal(res.cookies.length, 2, 'exactly the two auth cookies')
  for (const [name, path] of [['access_token', '/'], ['refresh_token', '/auth']] as const) {
    const cookie = cookieOf(res, name)
    t.ok(cookie, `${name} is cleared`)
    t.equal(cookie?.value, '', `${name} is emptied`)
    t.equal(cookie?.path, path, `${name} on its path`)
    const expired = cookie?.maxAge === 0 || (cookie?.expires instanceof Date && cookie.expires.getTime() < Date.now())
    t.ok(expired, `${name} expires now`)
    t.equal(cookie?.httpOnly, true)
  }
}

/** A user signed in twice, as two browsers would be. */
async function twoSessions (app: FastifyInstance) {
  const user = await createUser(app)
  return { user, a: await login(app, user), b: await login(app, user) }
}

t.test('POST /auth/logout revokes only the caller\'s session and clears the cookies', async (t) => {
  const app = await build(t)
  const { a, b } = await twoSessions(app)
  const res = await logout(app, a.access_token)
  assertSignedOut(t, res)

  const revoked = await me(app, a.access_token)
  t.equal(revoked.statusCode, 401)
  t.strictSame(revoked.json(), tokenRevoked)
  t.strictSame((await refresh(app, a.refresh_token)).json(), tokenRevoked, 'its refresh token no longer refreshes')
  t.equal((await me(app, b.access_token)).statusCode, 200, 'the other session still works')
  t.equal((await refresh(app, b.refresh_token)).statusCode, 200)
})

t.test('POST /auth/logout?scope=local is the default scope', async (t) => {
  const app = await build(t)
  const { a, b } = await twoSessions(app)
  assertSignedOut(t, await logout(app, a.access_token, 'local'))
  t.equal((await me(app, a.access_token)).statusCode, 401)
  t.equal((await me(app, b.access_token)).statusCode, 200)
})

t.test('POST /auth/logout?scope=others revokes the user\'s other sessions but not the caller\'s', async (t) => {
  const app = await build(t)
  const { a, b } = await twoSessions(app)
  const stranger = await login(app, await createUser(app))
  assertSignedOut(t, await logout(app, a.access_token, 'others'))

  t.equal((await me(app, a.access_token)).statusCode, 200, 'the caller stays signed in')
  t.equal((await refresh(app, a.refresh_token)).statusCode, 200)
  const other = await me(app, b.access_token)
  t.equal(other.statusCode, 401)
  t.strictSame(other.json(), tokenRevoked)
  t.strictSame((await refresh(app, b.refresh_token)).json(), tokenRevoked)
  t.equal((await me(app, stranger.access_token)).statusCode, 200, 'another user is untouched')
})

t.test('POST /auth/logout?scope=global revokes every session of the user', async (t) => {
  const app = await build(t)
  const { a, b } = await twoSessions(app)
  const stranger = await login(app, await createUser(app))
  assertSignedOut(t, await logout(app, a.access_token, 'global'))

  for (const [name, tokens] of [['the caller', a], ['the other session', b]] as const) {
    const res = await me(app, tokens.access_token)
    t.equal(res.statusCode, 401, name)
    t.strictSame(res.json(), tokenRevoked, name)
    t.strictSame((await refresh(app, tokens.refresh_token)).json(), tokenRevoked, name)
  }
  t.equal((await me(app, stranger.access_token)).statusCode, 200, 'another user is untouched')
})

t.test('POST /auth/logout identifies the session by the refresh token in the body', async (t) => {
  const app = await build(t)
  const { a, b } = await twoSessions(app)
  const res = await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: a.refresh_token } })
  assertSignedOut(t, res)
  t.strictSame((await me(app, a.access_token)).json(), tokenRevoked)
  t.strictSame((await refresh(app, a.refresh_token)).json(), tokenRevoked)
  t.equal((await me(app, b.access_token)).statusCode, 200)
})

t.test('POST /auth/logout without any credentials succeeds and clears the cookies', async (t) => {
  const app = await build(t)
  const { a } = await twoSessions(app)
  assertSignedOut(t, await app.inject({ method: 'POST', url: '/auth/logout' }))
  assertSignedOut(t, await app.inject({ method: 'POST', url: '/auth/logout', payload: {} }))
  t.equal((await me(app, a.access_token)).statusCode, 200, 'nothing was revoked')
})

t.test('POST /auth/logout?scope=global without credentials is token_missing', async (t) => {
  const app = await build(t)
  for (const scope of ['global', 'others']) {
    const res = await app.inject({ method: 'POST', url: `/auth/logout?scope=${scope}` })
    t.equal(res.statusCode, 401, scope)
    t.strictSame(res.json(), tokenMissing, scope)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"', scope)
  }
})

t.test('POST /auth/logout a second time with the same revoked token still succeeds', async (t) => {
  const app = await build(t)
  const { a } = await twoSessions(app)
  assertSignedOut(t, await logout(app, a.access_token))
  assertSignedOut(t, await logout(app, a.access_token))
  const byRefresh = await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: a.refresh_token } })
  assertSignedOut(t, byRefresh)
})

t.test('POST /auth/logout with an unknown scope is a 422', async (t) => {
  const app = await build(t)
  const { a } = await twoSessions(app)
  const res = await logout(app, a.access_token, 'everything')
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: { scope: ['The scope field is invalid'] }
  })
  t.equal((await me(app, a.access_token)).statusCode, 200, 'nothing was revoked')
})

t.test('POST /auth/logout with a Bearer header and a foreign Origin is not subject to the CSRF check', async (t) => {
  const app = await build(t)
  const { a } = await twoSessions(app)
  const res = await app.inject({ method: 'POST', url: '/auth/logout', headers: { ...authHeader(a.access_token), origin: 'https://evil.example' } })
  assertSignedOut(t, res)
  t.strictSame((await me(app, a.access_token)).json(), tokenRevoked)
})
