import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, setCookies, tempDir, type CreatedUser } from '../../helper.js'
import { ISO, MISSING_ADMIN, REVOKED, SUPERUSER_REQUIRED } from '../../patterns.js'

/*
 * The sessions a user can see and end (docs/api.md#sessions): whole bodies, never a token, ids of
 * other users' sessions answering like unknown ones, and revocation everywhere within a second.
 */

const SESSION_NOT_FOUND = { error: 'Not Found', message: 'Session not found', code: 'not_found' }
const USER_NOT_FOUND = { error: 'Not Found', message: 'User not found', code: 'not_found' }
const UNKNOWN_ID = '0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e11'
const SELF = 'http://localhost:80'

interface Signed { access_token: string, refresh_token: string, session_id: string, response: LightMyRequestResponse }

async function signIn (app: FastifyInstance, user: CreatedUser, userAgent: string, extra: Record<string, string> = {}): Promise<Signed> {
  const response = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'user-agent': userAgent, ...extra }, payload: { email: user.email, password: user.password, remember: true } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`)
  const body = response.json()
  const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString()) as { session_id: string }
  return { access_token: body.access_token, refresh_token: body.refresh_token, session_id: claims.session_id, response }
}

async function listOwn (app: FastifyInstance, token: string) {
  return await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(token) })
}

async function me (app: FastifyInstance, token: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
}

/** The JSON of an answer never holds either token of the caller's session. */
function assertNoToken (t: Test, res: LightMyRequestResponse, ...sessions: Signed[]): void {
  for (const s of sessions) {
    t.notOk(res.body.includes(s.access_token), 'no access token in the body')
    t.notOk(res.body.includes(s.refresh_token), 'no refresh token in the body')
    // and no part of one (a signature or a payload alone is still the token's)
    for (const part of [...s.access_token.split('.'), ...s.refresh_token.split('.')].slice(1)) t.notOk(res.body.includes(part), 'no token part')
  }
}

t.test('GET /api/auth/sessions lists the caller\'s live sessions newest first, whole, never a token', async (t) => {
  const app = await build(t, { TRUST_PROXY: '127.0.0.1' })
  const user = await createUser(app)
  const first = await signIn(app, user, 'Firefox/128', { 'x-forwarded-for': '203.0.113.7' })
  const second = await signIn(app, user, 'x'.repeat(600))
  const ended = await signIn(app, user, 'Ended/1')
  await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: ended.refresh_token } })
  // another user's session is not listed
  await signIn(app, await createUser(app), 'Other/1')

  const res = await listOwn(app, second.access_token)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const { data } = res.json()
  for (const s of data) for (const field of ['created_at', 'last_used_at', 'expires_at']) t.match(s[field], ISO)
  t.strictSame(res.json(), {
    data: [
      { id: second.session_id, current: true, created_at: data[0].created_at, last_used_at: data[0].created_at, expires_at: second.response.json().refresh_expires_at, ip: '127.0.0.1', user_agent: 'x'.repeat(256), aal: 'aal1', amr: ['pwd'] },
      { id: first.session_id, current: false, created_at: data[1].created_at, last_used_at: data[1].created_at, expires_at: first.response.json().refresh_expires_at, ip: '203.0.113.7', user_agent: 'Firefox/128', aal: 'aal1', amr: ['pwd'] }
    ]
  })
  t.ok(data[0].created_at >= data[1].created_at, 'newest first')
  assertNoToken(t, res, first, second)
})

t.test('a session without a User-Agent lists it as null; the address is the client\'s unless TRUST_PROXY', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const response = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'x-forwarded-for': '203.0.113.7', 'user-agent': '' }, payload: { email: user.email, password: user.password } })
  const token = response.json().access_token
  const [session] = (await listOwn(app, token)).json().data
  t.equal(session.ip, '127.0.0.1', 'X-Forwarded-For is not believed without TRUST_PROXY')
  t.equal(session.user_agent, null)
})

t.test('last_used_at is unchanged by 1,000 /auth/me calls and moved by a refresh, which also records the client', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const session = await signIn(app, user, 'Agent/1')
  const before = (await listOwn(app, session.access_token)).json().data[0]
  for (let i = 0; i < 1000; i++) {
    const res = await me(app, session.access_token)
    if (res.statusCode !== 200) t.fail(`/auth/me answered ${res.statusCode}`)
  }
  const stored = await app.store.sessions.findById(session.session_id)
  t.equal(stored?.lastUsedAt, before.last_used_at, 'no request wrote it')
  t.strictSame((await listOwn(app, session.access_token)).json().data[0], before)

  await new Promise((resolve) => setTimeout(resolve, 5))
  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', headers: { 'user-agent': 'Agent/2' }, payload: { refresh_token: session.refresh_token } })
  t.equal(refreshed.statusCode, 200)
  const after = (await listOwn(app, refreshed.json().access_token)).json().data[0]
  t.ok(after.last_used_at > before.last_used_at, 'a refresh moves it')
  t.equal(after.user_agent, 'Agent/2', 'and records the client it came from')
  t.equal(after.created_at, before.created_at)
  t.equal(after.id, before.id)
})

t.test('DELETE /api/auth/sessions/:id ends another session of the caller: 204, refused at once', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const phone = await signIn(app, user, 'Phone/1')
  const laptop = await signIn(app, user, 'Laptop/1')
  const res = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${phone.session_id}`, headers: authHeader(laptop.access_token) })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal(res.headers['set-cookie'], undefined, 'the caller\'s cookies stay')
  t.strictSame((await me(app, phone.access_token)).json(), REVOKED)
  const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: phone.refresh_token } })
  t.equal(refresh.statusCode, 401)
  t.equal((await me(app, laptop.access_token)).statusCode, 200, 'the caller\'s own session goes on')
  t.strictSame((await listOwn(app, laptop.access_token)).json().data.map((s: { id: string }) => s.id), [laptop.session_id])

  const again = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${phone.session_id}`, headers: authHeader(laptop.access_token) })
  t.equal(again.statusCode, 404, 'an ended session')
  t.strictSame(again.json(), SESSION_NOT_FOUND)
  const { entries } = await app.auditTrail.page({ event: 'session_revoked' }, 1, 10)
  t.strictSame(entries.map((e) => [e.actorId, e.userId, e.sessionId, e.detail]), [[user.id, user.id, phone.session_id, 'session_ended']])
})

t.test('DELETE /api/auth/sessions/:id of another user\'s session answers 404 exactly as an unknown id, and ends nothing', async (t) => {
  const app = await build(t)
  const mallory = await signIn(app, await createUser(app), 'Mallory/1')
  const victim = await signIn(app, await createUser(app), 'Victim/1')
  const foreign = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${victim.session_id}`, headers: authHeader(mallory.access_token) })
  const unknown = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${UNKNOWN_ID}`, headers: authHeader(mallory.access_token) })
  t.equal(foreign.statusCode, 404)
  t.equal(unknown.statusCode, 404)
  t.strictSame(foreign.json(), SESSION_NOT_FOUND)
  t.equal(foreign.body, unknown.body, 'the same body, byte for byte')
  t.equal((await me(app, victim.access_token)).statusCode, 200, 'the victim\'s session goes on')
  // the negative control: the owner can end it
  const own = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${victim.session_id}`, headers: authHeader(victim.access_token) })
  t.equal(own.statusCode, 204)
})

t.test('DELETE /api/auth/sessions/:id of the current session is a logout: both cookies cleared, tokens refused', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const session = await signIn(app, user, 'Browser/1')
  const res = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${session.session_id}`, cookies: { access_token: session.access_token }, headers: { origin: SELF } })
  t.equal(res.statusCode, 204)
  t.strictSame(setCookies(res).map((c) => [c.name, c.value, c.attributes.path]), [['access_token', '', '/'], ['refresh_token', '', '/auth']])
  t.strictSame((await me(app, session.access_token)).json(), REVOKED)

  const bad = await app.inject({ method: 'DELETE', url: '/api/auth/sessions/not-a-uuid', headers: authHeader((await signIn(app, user, 'B/2')).access_token) })
  t.equal(bad.statusCode, 422)
  t.strictSame(bad.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { id: ['The id field is invalid'] } })
})

t.test('DELETE /api/auth/sessions ends every other session of the caller: {revoked: n}', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const others = [await signIn(app, user, 'A/1'), await signIn(app, user, 'B/1')]
  const caller = await signIn(app, user, 'C/1')
  const bystander = await signIn(app, await createUser(app), 'D/1')
  const res = await app.inject({ method: 'DELETE', url: '/api/auth/sessions', headers: authHeader(caller.access_token) })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { revoked: 2 })
  assertNoToken(t, res, caller)
  for (const other of others) t.strictSame((await me(app, other.access_token)).json(), REVOKED)
  t.equal((await me(app, caller.access_token)).statusCode, 200)
  t.equal((await me(app, bystander.access_token)).statusCode, 200)
  t.strictSame((await app.inject({ method: 'DELETE', url: '/api/auth/sessions', headers: authHeader(caller.access_token) })).json(), { revoked: 0 })
})

t.test('GET and DELETE /api/users/:id/sessions: an admin sees and ends one user\'s sessions (current always false)', async (t) => {
  const app = await build(t)
  const admin = await signIn(app, await createUser(app, { roles: ['admin'] }), 'Admin/1')
  const user = await createUser(app)
  const one = await signIn(app, user, 'One/1')
  const two = await signIn(app, user, 'Two/1')

  const list = await app.inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: authHeader(admin.access_token) })
  t.equal(list.statusCode, 200)
  const { data } = list.json()
  t.strictSame(list.json(), {
    data: [
      { id: two.session_id, current: false, created_at: data[0].created_at, last_used_at: data[0].created_at, expires_at: two.response.json().refresh_expires_at, ip: '127.0.0.1', user_agent: 'Two/1', aal: 'aal1', amr: ['pwd'] },
      { id: one.session_id, current: false, created_at: data[1].created_at, last_used_at: data[1].created_at, expires_at: one.response.json().refresh_expires_at, ip: '127.0.0.1', user_agent: 'One/1', aal: 'aal1', amr: ['pwd'] }
    ]
  })
  assertNoToken(t, list, admin, one, two)

  const del = await app.inject({ method: 'DELETE', url: `/api/users/${user.id}/sessions`, headers: authHeader(admin.access_token) })
  t.equal(del.statusCode, 200)
  t.strictSame(del.json(), { revoked: 2 })
  for (const s of [one, two]) t.strictSame((await me(app, s.access_token)).json(), REVOKED)
  t.strictSame((await app.inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: authHeader(admin.access_token) })).json(), { data: [] })
  const { entries } = await app.auditTrail.page({ event: 'sessions_revoked' }, 1, 10)
  t.strictSame(entries.map((e) => [e.actorId, e.userId, e.detail]), [[claimsId(admin), user.id, 'admin_revoked: 2']])

  for (const method of ['GET', 'DELETE'] as const) {
    const unknown = await app.inject({ method, url: `/api/users/${UNKNOWN_ID}/sessions`, headers: authHeader(admin.access_token) })
    t.equal(unknown.statusCode, 404, `${method} unknown user`)
    t.strictSame(unknown.json(), USER_NOT_FOUND)
  }
})

function claimsId (s: Signed): string {
  return (JSON.parse(Buffer.from(s.access_token.split('.')[1] ?? '', 'base64url').toString()) as { user_id: string }).user_id
}

t.test('/api/users/:id/sessions: not for a plain user (missing_role), a superuser\'s only for a superuser', async (t) => {
  const app = await build(t)
  const admin = await signIn(app, await createUser(app, { roles: ['admin'] }), 'Admin/1')
  const plain = await createUser(app)
  const plainSession = await signIn(app, plain, 'Plain/1')
  const boss = await createUser(app, { roles: [], isSuperuser: true })
  const bossSession = await signIn(app, boss, 'Boss/1')

  for (const method of ['GET', 'DELETE'] as const) {
    const own = await app.inject({ method, url: `/api/users/${plain.id}/sessions`, headers: authHeader(plainSession.access_token) })
    t.equal(own.statusCode, 403, `${method} by a plain user, even for themself`)
    t.strictSame(own.json(), MISSING_ADMIN)
    const onBoss = await app.inject({ method, url: `/api/users/${boss.id}/sessions`, headers: authHeader(admin.access_token) })
    t.equal(onBoss.statusCode, 403, `${method} of a superuser by an admin`)
    t.strictSame(onBoss.json(), SUPERUSER_REQUIRED)
    t.equal(onBoss.headers['www-authenticate'], 'Bearer realm="gatehouse", error="insufficient_scope"')
  }
  t.equal((await me(app, bossSession.access_token)).statusCode, 200, 'the refused DELETE ended nothing')
  const bySuper = await app.inject({ method: 'GET', url: `/api/users/${boss.id}/sessions`, headers: authHeader(bossSession.access_token) })
  t.equal(bySuper.statusCode, 200)
  t.equal(bySuper.json().data.length, 1)
})

t.test('a session ended on one instance is refused by a second instance on the same database within one second', async (t) => {
  const dataDir = tempDir(t)
  const a = await build(t, { DATA_DIR: dataDir })
  const b = await build(t, { DATA_DIR: dataDir })
  const user = await createUser(a)
  const phone = await signIn(a, user, 'Phone/1')
  const laptop = await signIn(a, user, 'Laptop/1')
  t.equal((await me(b, phone.access_token)).statusCode, 200, 'the second instance accepts it first')
  const ended = await a.inject({ method: 'DELETE', url: `/api/auth/sessions/${phone.session_id}`, headers: authHeader(laptop.access_token) })
  t.equal(ended.statusCode, 204)
  const start = Date.now()
  let status = 200
  while (status === 200 && Date.now() - start < 1000) {
    status = (await me(b, phone.access_token)).statusCode
    if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(status, 401, `refused by the second instance after ${Date.now() - start} ms`)
  t.equal((await me(b, laptop.access_token)).statusCode, 200, 'the other session goes on there')
})
