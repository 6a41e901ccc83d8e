// Proves src/sessions/session-service.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import t from 'tap'
import { build, claimsOf, createUser, login, rawSql, testConfig, type Tokens } from '../../helper.js'

const tokenExpired = { error: 'Unauthorized', message: 'The token has expired', code: 'token_expired' }
const expiredChallenge = 'Bearer realm="gatehouse", error="invalid_token", error_description="The token has expired"'

interface TokenBody extends Tokens { expires_at: string, refresh_expires_at: string }

async function refresh (app: FastifyInstance, refreshToken: string) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } })
}

// a one-hour refresh token, in a session that may last two seconds from sign-in
const SHORT_SESSION = { ACCESS_TOKEN_TTL: '1s', REFRESH_TOKEN_TTL: '1h', SESSION_MAX_AGE: '2s' }

t.test('a refresh never extends a session past SESSION_MAX_AGE from its sign-in, and is refused after it', async (t) => {
  const app = await build(t, SHORT_SESSION)
  const user = await createUser(app)
  const signIn = await login(app, user)
  const first = signIn.response.json() as TokenBody
  const endsAt = new Date((claimsOf(first.access_token).iat + 2) * 1000).toISOString()
  t.equal(first.refresh_expires_at, endsAt, 'the first refresh token ends with the session')

  const rotated = await refresh(app, first.refresh_token)
  t.equal(rotated.statusCode, 200)
  const second = rotated.json() as TokenBody
  t.equal(second.refresh_expires_at, endsAt, 'a refresh does not move the end')
  t.ok(second.expires_at <= endsAt, 'nor does the access token outlive the session')

  while (Date.now() < Date.parse(endsAt)) await sleep(Date.parse(endsAt) - Date.now())
  const late = await refresh(app, second.refresh_token)
  t.equal(late.statusCode, 401)
  t.equal(late.headers['www-authenticate'], expiredChallenge)
  t.strictSame(late.json(), tokenExpired)
})

t.test('a session signed in longer ago than SESSION_MAX_AGE cannot refresh, whatever its refresh token\'s exp', async (t) => {
  // a session from before the limit existed: its refresh token runs on past it
  const app = await build(t)
  const user = await createUser(app)
  const { refresh_token: refreshToken } = await login(app, user)
  const longAgo = new Date(Date.now() - 31 * 86400 * 1000).toISOString()
  await rawSql(app.config, sql`update sessions set signed_in_at = ${longAgo}, created_at = ${longAgo} where user_id = ${user.id}`)
  const res = await refresh(app, refreshToken)
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], expiredChallenge)
  t.strictSame(res.json(), tokenExpired)
})

t.test('SESSION_MAX_AGE is 30 days by default and may not be shorter than ACCESS_TOKEN_TTL', async (t) => {
  t.equal(testConfig(t).sessionMaxAge, 30 * 86400)
  t.throws(() => testConfig(t, { SESSION_MAX_AGE: '10m' }), {
    message: 'Invalid configuration: SESSION_MAX_AGE must be at least ACCESS_TOKEN_TTL'
  })
})
