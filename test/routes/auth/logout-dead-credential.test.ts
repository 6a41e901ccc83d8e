// Proves routes/auth/session.ts (POST /auth/logout).
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, changePassword, createUser, login } from '../../helper.js'

const tokenRevoked = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }

async function me (app: FastifyInstance, accessToken: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(accessToken) })
}

async function refresh (app: FastifyInstance, refreshToken: string) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } })
}

async function logoutWith (app: FastifyInstance, refreshToken: string, scope: string) {
  return await app.inject({ method: 'POST', url: `/auth/logout?scope=${scope}`, payload: { refresh_token: refreshToken } })
}

/** A user with two sessions, the first one refreshed once: its first refresh token is spent. */
async function spentToken (t: Test, app: FastifyInstance) {
  const user = await createUser(app)
  const a = await login(app, user)
  const b = await login(app, user)
  const rotated = await refresh(app, a.refresh_token)
  t.equal(rotated.statusCode, 200)
  return { user, a, b, spent: a.refresh_token, current: rotated.json() as { access_token: string, refresh_token: string } }
}

// a zero grace interval: the token spent by the rotation is dead at once, not a racing tab's
const NO_GRACE = { REFRESH_REUSE_INTERVAL: '0s' }

t.test('POST /auth/logout?scope=global or others with a spent refresh token ends nothing', async (t) => {
  for (const scope of ['global', 'others']) {
    const app = await build(t, NO_GRACE)
    const { a, b, spent, current } = await spentToken(t, app)
    const res = await logoutWith(app, spent, scope)
    t.equal(res.statusCode, 401, scope)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token has been revoked"', scope)
    t.strictSame(res.json(), tokenRevoked, scope)

    t.equal((await me(app, b.access_token)).statusCode, 200, `${scope}: the other session still works`)
    t.equal((await refresh(app, b.refresh_token)).statusCode, 200, `${scope}: and still refreshes`)
    t.equal((await me(app, a.access_token)).statusCode, 200, `${scope}: the session of the spent token too`)
    t.equal((await refresh(app, current.refresh_token)).statusCode, 200, `${scope}: with its current refresh token`)
  }
})

t.test('POST /auth/logout?scope=global with a refresh token of a session a password change ended ends nothing', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const old = await login(app, user)
  const kept = await login(app, user)
  const changed = await changePassword(app, kept.access_token, user.password, 'New-Password-2')
  t.equal(changed.statusCode, 200)

  const res = await logoutWith(app, old.refresh_token, 'global')
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), tokenRevoked)
  t.equal((await me(app, kept.access_token)).statusCode, 200, 'the session that changed the password still works')
  t.equal((await refresh(app, kept.refresh_token)).statusCode, 200)
})

t.test('POST /auth/logout with a spent refresh token and the default scope answers 204 and ends nothing', async (t) => {
  const app = await build(t, NO_GRACE)
  const { a, spent, current } = await spentToken(t, app)
  const res = await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: spent } })
  t.equal(res.statusCode, 204)
  t.equal((await me(app, a.access_token)).statusCode, 200, 'the session goes on')
  t.equal((await refresh(app, current.refresh_token)).statusCode, 200)
})

t.test('POST /auth/logout?scope=global with the refresh token a racing tab just spent still signs out everywhere', async (t) => {
  // the control: within the grace interval the previous token is as good as the current one
  const app = await build(t)
  const { a, b, spent } = await spentToken(t, app)
  const res = await logoutWith(app, spent, 'global')
  t.equal(res.statusCode, 204)
  t.strictSame((await me(app, a.access_token)).json(), tokenRevoked)
  t.strictSame((await me(app, b.access_token)).json(), tokenRevoked)
})

t.test('POST /auth/logout?scope=global with the current refresh token ends every session', async (t) => {
  const app = await build(t, NO_GRACE)
  const { b, current } = await spentToken(t, app)
  const res = await logoutWith(app, current.refresh_token, 'global')
  t.equal(res.statusCode, 204)
  t.strictSame((await me(app, current.access_token)).json(), tokenRevoked)
  t.strictSame((await me(app, b.access_token)).json(), tokenRevoked)
})
