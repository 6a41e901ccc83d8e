// Proves src/limits/throttle.ts, and TRUST_PROXY in the app: which address is the client's (src/app.ts).
import t from 'tap'
import { authHeader, build, createUser, login } from '../helper.js'
import { BAD_LOGIN, RATE_LIMITED } from '../patterns.js'

function attempt (email: string, password: string, ip = '203.0.113.1', url = '/auth/login') {
  return { method: 'POST' as const, url, remoteAddress: ip, payload: { email, password } }
}

t.test('after LOGIN_MAX_FAILURES failures for one email from one address, even the right password gets 429 with Retry-After', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 3, LOGIN_FAILURE_WINDOW: '10m' })
  const user = await createUser(app)
  for (let i = 0; i < 3; i++) {
    const res = await app.inject(attempt(user.email, 'wrong-password'))
    t.equal(res.statusCode, 401, `failure ${i + 1} is a plain 401`)
    t.same(res.json(), BAD_LOGIN)
  }
  const locked = await app.inject(attempt(user.email, user.password))
  t.equal(locked.statusCode, 429)
  t.same(locked.json(), RATE_LIMITED)
  const retryAfter = Number(locked.headers['retry-after'])
  t.ok(retryAfter > 590 && retryAfter <= 600, `Retry-After is the rest of the window (${retryAfter})`)

  const sameEmailUpperCase = await app.inject(attempt(user.email.toUpperCase(), user.password))
  t.equal(sameEmailUpperCase.statusCode, 429, 'the email is compared case-insensitively')
  const viaApi = await app.inject(attempt(user.email, user.password, '203.0.113.1', '/api/auth/login'))
  t.equal(viaApi.statusCode, 429, '/api/auth/login shares the throttle')
})

t.test('the failure throttle keys on email and address: the user can still sign in from their own address', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 2 })
  const user = await createUser(app)
  for (let i = 0; i < 2; i++) await app.inject(attempt(user.email, 'wrong-password', '198.51.100.66'))
  const attacker = await app.inject(attempt(user.email, user.password, '198.51.100.66'))
  t.equal(attacker.statusCode, 429)
  const owner = await app.inject(attempt(user.email, user.password, '203.0.113.7'))
  t.equal(owner.statusCode, 200, 'the owner, elsewhere, is not locked out')
})

t.test('a successful login resets the failure count', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 3 })
  const user = await createUser(app)
  for (let i = 0; i < 2; i++) await app.inject(attempt(user.email, 'wrong-password'))
  t.equal((await app.inject(attempt(user.email, user.password))).statusCode, 200)
  for (let i = 0; i < 2; i++) t.equal((await app.inject(attempt(user.email, 'wrong-password'))).statusCode, 401)
  t.equal((await app.inject(attempt(user.email, user.password))).statusCode, 200, 'two fresh failures are under the limit')
})

t.test('unknown emails are throttled the same way, so the throttle reveals nothing', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 2 })
  for (let i = 0; i < 2; i++) t.equal((await app.inject(attempt('ghost@example.com', 'whatever'))).statusCode, 401)
  const res = await app.inject(attempt('ghost@example.com', 'whatever'))
  t.equal(res.statusCode, 429)
  t.same(res.json(), RATE_LIMITED)
})

t.test('LOGIN_RATE_LIMIT caps attempts per address whatever the email, with RateLimit headers', async (t) => {
  const app = await build(t, { LOGIN_RATE_LIMIT: '3/m', LOGIN_MAX_FAILURES: 100 })
  const first = await app.inject(attempt('a@example.com', 'x'))
  t.equal(first.statusCode, 401)
  t.equal(first.headers['ratelimit-limit'], '3')
  t.equal(first.headers['ratelimit-remaining'], '2')
  t.ok(Number(first.headers['ratelimit-reset']) > 0)
  await app.inject(attempt('b@example.com', 'x', '203.0.113.1', '/api/auth/login'))
  await app.inject(attempt('c@example.com', 'x'))
  const res = await app.inject(attempt('d@example.com', 'x'))
  t.equal(res.statusCode, 429)
  t.same(res.json(), RATE_LIMITED)
  t.ok(Number(res.headers['retry-after']) >= 1)
  const other = await app.inject(attempt('d@example.com', 'x', '203.0.113.99'))
  t.equal(other.statusCode, 401, 'another address has its own budget')
})

t.test('register shares the login rate limit', async (t) => {
  const app = await build(t, { LOGIN_RATE_LIMIT: '2/m', ENABLE_REGISTER: true })
  const body = (i: number) => ({ email: `r${i}@example.com`, password: 'long-enough', name: 'Reg' })
  t.equal((await app.inject({ method: 'POST', url: '/auth/register', payload: body(1) })).statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'r1@example.com', password: 'nope-nope' } })).statusCode, 401)
  const res = await app.inject({ method: 'POST', url: '/auth/register', payload: body(2) })
  t.equal(res.statusCode, 429)
  t.same(res.json(), RATE_LIMITED)
})

t.test('refresh is rate limited per address', async (t) => {
  const app = await build(t, { REFRESH_RATE_LIMIT: '2/m' })
  const user = await createUser(app)
  let { refresh_token: token } = await login(app, user)
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token } })
    t.equal(res.statusCode, 200)
    token = res.json().refresh_token
  }
  const res = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token } })
  t.equal(res.statusCode, 429)
  t.same(res.json(), RATE_LIMITED)
})

t.test('change-password: wrong current passwords are throttled per user and address', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 2 })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const change = (current: string) => app.inject({
    method: 'POST',
    url: '/api/auth/change-password',
    headers: authHeader(token),
    payload: { current_password: current, new_password: 'Brand-new-pass1' }
  })
  for (let i = 0; i < 2; i++) {
    const res = await change('wrong-password')
    t.equal(res.statusCode, 400)
    t.same(res.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  }
  const res = await change(user.password)
  t.equal(res.statusCode, 429)
  t.same(res.json(), RATE_LIMITED)
})

t.test('X-Forwarded-For is ignored unless TRUST_PROXY says otherwise', async (t) => {
  const spoof = (app: Awaited<ReturnType<typeof build>>, forwarded: string) => app.inject({
    method: 'POST',
    url: '/auth/login',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': forwarded },
    payload: { email: 'x@example.com', password: 'x' }
  })

  const untrusting = await build(t, { LOGIN_RATE_LIMIT: '2/m', LOGIN_MAX_FAILURES: 100 })
  await spoof(untrusting, '198.51.100.1')
  await spoof(untrusting, '198.51.100.2')
  const forged = await spoof(untrusting, '198.51.100.3')
  t.equal(forged.statusCode, 429, 'a forged header does not buy a fresh budget')

  const trusting = await build(t, { LOGIN_RATE_LIMIT: '2/m', LOGIN_MAX_FAILURES: 100, TRUST_PROXY: '127.0.0.1' })
  await spoof(trusting, '198.51.100.1')
  await spoof(trusting, '198.51.100.1')
  t.equal((await spoof(trusting, '198.51.100.1')).statusCode, 429, 'the forwarded client is limited')
  t.equal((await spoof(trusting, '198.51.100.2')).statusCode, 401, 'behind a trusted proxy each client has its own budget')
})

t.test('an accepted TRUST_PROXY list starts the app and is applied', async (t) => {
  const app = await build(t, { TRUST_PROXY: '127.0.0.0/8,::1' }, {
    setup: (app) => app.get('/ip', async (request) => ({ ip: request.ip }))
  })
  const res = await app.inject({ url: '/ip', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ip: '203.0.113.9' })
})

t.test('TRUST_PROXY refuses `true` (trusting every hop would let anyone forge their address)', async (t) => {
  await t.rejects(build(t, { TRUST_PROXY: 'true' }), /TRUST_PROXY/)
})
