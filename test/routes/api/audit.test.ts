import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, buildFrom, createUser, login, testConfig } from '../../helper.js'
import { ISO, MISSING_ADMIN } from '../../patterns.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const LOCAL = '127.0.0.1'

interface AuditEvent { id: string, at: string, event: string, [field: string]: unknown }

function sessionOf (token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { session_id: string }).session_id
}

async function audit (app: FastifyInstance, token: string, query = '') {
  return await app.inject({ method: 'GET', url: `/api/audit${query}`, headers: authHeader(token) })
}

/** id and at are checked by shape (and order); the rest of each event is returned for t.same. */
function stable (t: Test, events: AuditEvent[]): Array<Record<string, unknown>> {
  for (let i = 0; i < events.length; i++) {
    const { id, at } = events[i] as AuditEvent
    t.match(id, UUID_V7)
    t.match(at, ISO)
    const older = events[i + 1]
    if (older !== undefined) t.ok(at > older.at || (at === older.at && id > older.id), `event ${i} is newer than event ${i + 1}`)
  }
  return events.map(({ id: _id, at: _at, ...rest }) => rest)
}

interface EventFields { outcome?: string, actor_id?: string | null, user_id?: string | null, session_id?: string | null, email?: string | null, address?: string, detail?: string | null }

function event (name: string, fields: EventFields) {
  return { event: name, outcome: 'success', actor_id: null, user_id: null, session_id: null, email: null, address: LOCAL, detail: null, ...fields }
}

/** An event of a signed-in user acting on their own account (actor and target alike). */
function own (name: string, userId: string, fields: EventFields = {}) {
  return event(name, { actor_id: userId, user_id: userId, ...fields })
}

t.test('every audited action is persisted and listed newest first with its exact fields', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const admin = await createUser(app, { email: 'admin@example.com', roles: ['admin'] })
  const user = await createUser(app, { email: 'user@example.com' })

  const failed = await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '203.0.113.5', payload: { email: ' USER@example.com', password: 'Wrong-Password-1' } })
  t.equal(failed.statusCode, 401)
  const first = await login(app, user)
  const rotated = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: first.refresh_token } })
  t.equal(rotated.statusCode, 200)
  const second = await login(app, user)
  const changed = await app.inject({
    method: 'POST',
    url: '/api/auth/change-password',
    headers: authHeader(second.access_token),
    payload: { current_password: user.password, new_password: 'New-Password-2' }
  })
  t.equal(changed.statusCode, 200)
  const out = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(second.access_token) })
  t.equal(out.statusCode, 204)

  const registered = await app.inject({ method: 'POST', url: '/auth/register', payload: { email: 'new@example.com', password: 'long-enough', name: 'Newcomer' } })
  t.equal(registered.statusCode, 201)
  const newcomer = registered.json() as { access_token: string, user: { id: string } }

  const third = await login(app, { email: user.email, password: 'New-Password-2' })
  const next = (await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: third.refresh_token } })).json() as { refresh_token: string }
  await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: next.refresh_token } })
  const reused = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: third.refresh_token } })
  t.equal(reused.statusCode, 401)

  const adminToken = (await login(app, admin)).access_token
  const deleted = await app.inject({ method: 'DELETE', url: `/api/users/${newcomer.user.id}`, headers: authHeader(adminToken) })
  t.equal(deleted.statusCode, 204)

  const res = await audit(app, adminToken, '?per_page=100')
  t.equal(res.statusCode, 200)
  const body = res.json() as { data: AuditEvent[], pagination: unknown }
  t.same(body.pagination, { current_page: 1, per_page: 100, total: 15, last_page: 1, from: 1, to: 100 })
  t.strictSame(stable(t, body.data), [
    event('user_deleted', { actor_id: admin.id, user_id: newcomer.user.id }),
    event('sessions_revoked', { actor_id: admin.id, user_id: newcomer.user.id, detail: 'user_deleted: 1' }),
    own('login_succeeded', admin.id, { session_id: sessionOf(adminToken) }),
    event('refresh_reuse_detected', { outcome: 'failure', user_id: user.id, session_id: sessionOf(third.access_token) }),
    own('refreshed', user.id, { session_id: sessionOf(third.access_token) }),
    own('refreshed', user.id, { session_id: sessionOf(third.access_token) }),
    own('login_succeeded', user.id, { session_id: sessionOf(third.access_token) }),
    own('registered', newcomer.user.id, { session_id: sessionOf(newcomer.access_token) }),
    own('logged_out', user.id, { session_id: sessionOf(second.access_token), detail: 'local' }),
    own('password_changed', user.id, { session_id: sessionOf(second.access_token) }),
    own('sessions_revoked', user.id, { detail: 'password_changed: 1' }),
    own('login_succeeded', user.id, { session_id: sessionOf(second.access_token) }),
    own('refreshed', user.id, { session_id: sessionOf(first.access_token) }),
    own('login_succeeded', user.id, { session_id: sessionOf(first.access_token) }),
    event('login_failed', { outcome: 'failure', user_id: user.id, email: 'user@example.com', address: '203.0.113.5' })
  ])
})

t.test('GET /api/audit is for admins: 401 without a token, 403 for a user, 200 for a superuser', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const root = await createUser(app, { roles: [], isSuperuser: true })

  const anonymous = await app.inject({ method: 'GET', url: '/api/audit' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.strictSame(anonymous.json(), { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' })

  const denied = await audit(app, (await login(app, user)).access_token)
  t.equal(denied.statusCode, 403)
  t.strictSame(denied.json(), MISSING_ADMIN)

  const rootToken = (await login(app, root)).access_token
  const allowed = await audit(app, rootToken)
  t.equal(allowed.statusCode, 200)
  // two sign-ins and the user's refusal (access_denied)
  t.same((allowed.json() as { pagination: unknown }).pagination, { current_page: 1, per_page: 15, total: 3, last_page: 1, from: 1, to: 15 })
})

t.test('GET /api/audit pages like /api/users and filters by user_id and event', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: `ghost${i}@example.com`, password: 'whatever' } })
    t.equal(res.statusCode, 401)
  }
  const token = (await login(app, admin)).access_token
  const ghost = (i: number) => event('login_failed', { outcome: 'failure', email: `ghost${i}@example.com` })
  const adminLogin = own('login_succeeded', admin.id, { session_id: sessionOf(token) })

  const pages = [
    ['?page=1&per_page=4', [adminLogin, ghost(4), ghost(3), ghost(2)], { current_page: 1, per_page: 4, total: 6, last_page: 2, from: 1, to: 4 }],
    ['?page=2&per_page=4', [ghost(1), ghost(0)], { current_page: 2, per_page: 4, total: 6, last_page: 2, from: 5, to: 8 }],
    ['?page=3&per_page=4', [], { current_page: 3, per_page: 4, total: 6, last_page: 2, from: 9, to: 12 }],
    ['', [adminLogin, ghost(4), ghost(3), ghost(2), ghost(1), ghost(0)], { current_page: 1, per_page: 15, total: 6, last_page: 1, from: 1, to: 15 }],
    ['?event=login_failed&per_page=2', [ghost(4), ghost(3)], { current_page: 1, per_page: 2, total: 5, last_page: 3, from: 1, to: 2 }],
    [`?user_id=${admin.id}`, [adminLogin], { current_page: 1, per_page: 15, total: 1, last_page: 1, from: 1, to: 15 }],
    [`?user_id=${admin.id}&event=login_failed`, [], { current_page: 1, per_page: 15, total: 0, last_page: 0, from: 1, to: 15 }]
  ] as const
  for (const [query, data, pagination] of pages) {
    const res = await audit(app, token, query)
    t.equal(res.statusCode, 200, query)
    const body = res.json() as { data: AuditEvent[], pagination: unknown }
    t.strictSame(stable(t, body.data), data, query)
    t.strictSame(body.pagination, pagination, query)
  }
})

t.test('GET /api/audit with an invalid query answers 422 naming every field', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const token = (await login(app, admin)).access_token
  for (const [query, errors] of [
    ['?page=0&per_page=101', { page: ['The page field must be at least 1'], per_page: ['The per_page field must not exceed 100'] }],
    ['?event=password_reset', { event: ['The event field is invalid'] }],
    ['?user_id=42', { user_id: ['The user_id field is invalid'] }],
    // an unknown parameter is ignored: only the invalid page is reported
    ['?actor=me&page=0', { page: ['The page field must be at least 1'] }]
  ] as const) {
    const res = await audit(app, token, query)
    t.equal(res.statusCode, 422, query)
    t.strictSame(res.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors }, query)
  }
})

t.test('a failed audit insert is logged and the request still succeeds', async (t) => {
  const lines: string[] = []
  const app = await buildFrom(t, testConfig(t, { LOG_LEVEL: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
  const user = await createUser(app)
  t.intercept(app.store.auditEvents, 'insertMany', { value: async () => { throw new Error('SQLITE_FULL: database or disk is full') } })

  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(res.statusCode, 200)
  await app.auditTrail.flush()
  const records = lines.map((line) => JSON.parse(line) as { level: number, msg: string, events?: number, err?: { message: string }, audit?: string })
  t.match(records.find((r) => r.audit !== undefined), { level: 30, msg: 'audit', audit: 'login_succeeded' }, 'the log line is written all the same')
  t.match(records.find((r) => r.msg === 'writing audit events failed'), { level: 50, events: 1, err: { message: 'SQLITE_FULL: database or disk is full' } })
})

t.test('events recorded just before shutdown are written before the store closes', async (t) => {
  const config = testConfig(t)
  const app = await buildFrom(t, config)
  const user = await createUser(app, { roles: ['admin'] })
  await login(app, user)
  await app.close()

  const again = await buildFrom(t, config)
  const res = await audit(again, (await login(again, user)).access_token)
  t.equal(res.statusCode, 200)
  t.same((res.json() as { data: AuditEvent[] }).data.map((e) => e.event), ['login_succeeded', 'login_succeeded'])
})

t.test('while the database lags, at most 50000 events wait in memory; the rest are dropped and the drop is logged', async (t) => {
  const lines: string[] = []
  const app = await buildFrom(t, testConfig(t, { LOG_LEVEL: 'error' }), { logStream: { write: (line) => { lines.push(line) } } })
  let release = () => {}
  const gate = new Promise<void>((resolve) => { release = resolve })
  const insertMany = app.store.auditEvents.insertMany.bind(app.store.auditEvents)
  t.intercept(app.store.auditEvents, 'insertMany', { value: async (entries: Parameters<typeof insertMany>[0]) => { await gate; await insertMany(entries) } })

  for (let i = 0; i < 50_003; i++) app.auditTrail.sink({ event: 'login_failed', email: `flood${i}@example.com` }, { ip: '192.0.2.1' })
  release()
  await app.auditTrail.flush()
  t.same(lines.map((line) => JSON.parse(line) as Record<string, unknown>).map(({ msg, events }) => ({ msg, events })), [
    { msg: 'audit events dropped: the database fell too far behind', events: 3 }
  ])
  t.equal(await app.store.auditEvents.count({ event: 'login_failed' }), 50_000)
})
