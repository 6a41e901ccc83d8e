// Proves src/logging/logger.ts and plugins/audit.ts.
import t, { type Test } from 'tap'
import { authHeader, buildFrom, cookieOf, createUser, login, testConfig } from '../helper.js'
import { UUID } from '../patterns.js'

interface LogRecord { level: number, msg?: string, audit?: string, reqId?: string, [key: string]: unknown }

/** The app with request logging on, writing its pino lines where the test can read them. */
async function buildLogged (t: Test, values: Record<string, unknown> = {}) {
  const lines: string[] = []
  const config = testConfig(t, { LOG_LEVEL: 'info', LOG_REQUESTS: true, ...values })
  const app = await buildFrom(t, config, { logStream: { write: (line) => { lines.push(line) } } })
  const records = () => lines.map((line) => JSON.parse(line) as LogRecord)
  return { app, lines, records }
}

t.test('sign-in, /auth/me, refresh and logout write audit lines and no secret', async (t) => {
  const { app, lines, records } = await buildLogged(t)
  const user = await createUser(app)

  const failed = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: 'Wrong-Password-1' } })
  t.equal(failed.statusCode, 401)

  const first = await login(app, user, { remember: true })
  const accessCookie = cookieOf(first.response, 'access_token')?.value ?? ''
  const refreshCookie = cookieOf(first.response, 'refresh_token')?.value ?? ''
  t.ok(accessCookie.length > 0 && refreshCookie.length > 0, 'remember sets both cookies')
  const sessionId = JSON.parse(Buffer.from(first.access_token.split('.')[1] ?? '', 'base64url').toString()).session_id as string
  t.match(sessionId, UUID)

  const byBearer = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(first.access_token) })
  t.equal(byBearer.statusCode, 200)
  const byCookie = await app.inject({ method: 'GET', url: '/auth/me', cookies: { access_token: accessCookie } })
  t.equal(byCookie.statusCode, 200)

  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: first.refresh_token } })
  t.equal(refreshed.statusCode, 200)
  const second = refreshed.json() as { access_token: string, refresh_token: string }

  const out = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(second.access_token), payload: { refresh_token: second.refresh_token } })
  t.equal(out.statusCode, 204)

  const audits = records().filter((r) => r.audit !== undefined)
  t.same(audits.map((r) => r.audit), ['login_failed', 'login_succeeded', 'refreshed', 'logged_out'])
  for (const record of audits) {
    t.equal(record.level, 30, `${record.audit} at info`)
    t.equal(record.msg, 'audit')
    t.equal(record.ip, '127.0.0.1', `${record.audit} has the client address`)
  }
  t.match(audits[0], { audit: 'login_failed', user_id: user.id, email: user.email })
  t.notOk('session_id' in (audits[0] ?? {}), 'a failed sign-in has no session')
  t.match(audits[1], { audit: 'login_succeeded', user_id: user.id, session_id: sessionId })
  t.match(audits[2], { audit: 'refreshed', user_id: user.id, session_id: sessionId })
  t.match(audits[3], { audit: 'logged_out', user_id: user.id, session_id: sessionId })

  // request lines are written too (LOG_REQUESTS), so the check below covers them
  const completed = records().filter((r) => r.msg === 'request completed')
  t.equal(completed.length, 6)

  const secrets = new Set([
    user.password,
    'Wrong-Password-1',
    first.access_token,
    first.refresh_token,
    second.access_token,
    second.refresh_token,
    accessCookie,
    refreshCookie
  ])
  // a token's signature alone is enough to find a leak of part of a token
  for (const token of [first.access_token, first.refresh_token, second.access_token, second.refresh_token]) {
    secrets.add(token.split('.')[2] ?? token)
  }
  const log = lines.join('')
  for (const secret of secrets) t.notOk(log.includes(secret), `the log does not contain ${secret.slice(0, 12)}…`)
  t.notMatch(log, /Bearer /)
})

t.test('a sign-in body that fails validation logs neither the password nor the body', async (t) => {
  const { app, lines, records } = await buildLogged(t)
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'not-an-email', password: 'Secret-Value-77' } })
  t.equal(res.statusCode, 422)
  t.notOk(lines.join('').includes('Secret-Value-77'))
  t.match(records().find((r) => r.msg === 'request rejected'), { level: 30, code: 'validation_failed' })
})

t.test('a 4xx is logged at info, not as an error', async (t) => {
  const { app, records } = await buildLogged(t)
  const res = await app.inject({ method: 'GET', url: '/nope' })
  t.equal(res.statusCode, 404)
  const forRequest = records().filter((r) => r.reqId !== undefined)
  t.ok(forRequest.length > 0)
  t.same(forRequest.filter((r) => r.level > 30), [], 'nothing above info')
  t.match(forRequest.find((r) => r.msg === 'request rejected'), { level: 30, code: 'not_found' })
  t.match(forRequest.find((r) => r.msg === 'request completed'), { level: 30, res: { statusCode: 404 } })
})

t.test('a 500 is logged at error with the cause, under the request id of the body', async (t) => {
  const { app, records } = await buildLogged(t)
  t.intercept(app.store.users, 'findByEmail', { value: async () => { throw new Error('db exploded: secret-detail') } })
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'a@b.io', password: 'Some-Password-1' } })
  t.equal(res.statusCode, 500)
  const requestId = res.json().request_id as string
  t.match(requestId, UUID)
  const errors = records().filter((r) => r.level === 50)
  t.equal(errors.length, 1)
  t.match(errors[0], { reqId: requestId, msg: 'request failed', err: { message: 'db exploded: secret-detail', type: 'Error' } })
  t.notOk(JSON.stringify(records()).includes('Some-Password-1'))
})

t.test('LOG_REQUESTS off writes no request lines, but the audit lines stay', async (t) => {
  const { app, records } = await buildLogged(t, { LOG_REQUESTS: false })
  const user = await createUser(app)
  await login(app, user)
  t.same(records().filter((r) => r.msg === 'incoming request' || r.msg === 'request completed'), [])
  t.same(records().filter((r) => r.audit !== undefined).map((r) => r.audit), ['login_succeeded'])
})

t.test('a forward-auth 200, written straight to the Node response, is logged as completed like any other answer', async (t) => {
  const { app, records } = await buildLogged(t)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const res = await app.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(token) })
  t.equal(res.statusCode, 200)
  const lines = records().filter((r) => r.msg === 'incoming request' || r.msg === 'request completed')
  const verifyId = lines.find((r) => r.msg === 'incoming request' && (r.req as { url?: string } | undefined)?.url === '/auth/verify')?.reqId
  t.match(verifyId, UUID)
  t.match(lines.filter((r) => r.reqId === verifyId), [
    { level: 30, msg: 'incoming request', req: { method: 'GET', url: '/auth/verify' } },
    { level: 30, msg: 'request completed', res: { statusCode: 200 }, responseTime: Number }
  ])
})
