import t from 'tap'
import { authHeader, build, claimsOf, createUser, login } from '../../helper.js'
import { REVOKED } from '../../patterns.js'

/* SESSIONS_MAX_PER_USER (src/sessions/session-service.ts): a sign-in beyond it ends the user's oldest sessions. */

t.test('a sign-in beyond SESSIONS_MAX_PER_USER ends the oldest session: its tokens are refused at once, and it is audited', async (t) => {
  const app = await build(t, { SESSIONS_MAX_PER_USER: 2 })
  const user = await createUser(app)
  const first = await login(app, user)
  const second = await login(app, user)
  const me = async (token: string) => await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.equal((await me(first.access_token)).statusCode, 200, 'at the limit nothing ends')

  const third = await login(app, user)
  const refused = await me(first.access_token)
  t.equal(refused.statusCode, 401, 'the oldest session\'s access token is refused at once')
  t.same(refused.json(), REVOKED)
  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: first.refresh_token } })
  t.equal(refreshed.statusCode, 401, 'and its refresh token is dead')
  t.same(refreshed.json(), REVOKED)
  t.equal((await me(second.access_token)).statusCode, 200, 'the newer ones go on')
  t.equal((await me(third.access_token)).statusCode, 200)

  const listed = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(third.access_token) })
  t.equal(listed.statusCode, 200)
  t.same(listed.json().data.map((s: { id: string, current: boolean }) => [s.id, s.current]),
    [[claimsOf(third.access_token).session_id, true], [claimsOf(second.access_token).session_id, false]])

  const { entries } = await app.auditTrail.page({ userId: user.id, event: 'sessions_revoked' }, 1, 50)
  t.same(entries.map((e) => [e.event, e.actorId, e.detail]), [['sessions_revoked', null, 'session_limit: 1']])
})

t.test('sign-ins at once never leave more than SESSIONS_MAX_PER_USER live sessions', async (t) => {
  const app = await build(t, { SESSIONS_MAX_PER_USER: 3, LOGIN_MAX_FAILURES: 100 }) // every sign-in at once holds a place in the failure count
  const user = await createUser(app)
  const pairs = await Promise.all(Array.from({ length: 12 }, async () => await login(app, user)))
  const live = await Promise.all(pairs.map(async (pair) => (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(pair.access_token) })).statusCode))
  t.same(live.filter((code) => code === 200).length, 3, `three access tokens still accepted: ${live.join(',')}`)
  t.same(live.filter((code) => code === 401).length, 9)
  const newest = pairs.find((_, i) => live[i] === 200)
  const listed = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(newest?.access_token ?? '') })
  t.equal(listed.json().data.length, 3)
})

t.test('SESSIONS_MAX_PER_USER defaults to 100 and takes 1 to 10000', async (t) => {
  t.equal((await build(t)).config.sessionsMaxPerUser, 100)
  await t.rejects(build(t, { SESSIONS_MAX_PER_USER: 0 }), /SESSIONS_MAX_PER_USER must be >= 1/)
})
