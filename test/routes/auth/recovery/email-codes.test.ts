import t from 'tap'
import { authHeader, claimsOf, cookieOf, createUser, tokenResponse } from '../../../helper.js'
import { codeFor, delivered, INVALID_OTP, post, queued, recoveryApp, failOutboxWrites } from './support.js'

const verify = (email: string, code: string, purpose: string, extra: Record<string, unknown> = {}) => ({ email, code, purpose, ...extra })

t.test('an email code signs in exactly as a password does, with amr ["email"], cookies with remember', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app, { email: 'code@example.com' })
  const code = await codeFor(app, user.email, 'login')
  t.equal((await delivered(app, user.email, 1)).subject, 'Your gatehouse sign-in code')
  const res = await post(app, '/auth/verify-otp', verify(user.email, code, 'login', { remember: true }))
  t.equal(res.statusCode, 200)
  const body = res.json()
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(body.access_token) })
  t.equal(me.statusCode, 200)
  t.strictSame(body, tokenResponse(body, me.json()))
  const claims = claimsOf(body.access_token)
  t.same([claims.aal, claims.amr], ['aal1', ['email']])
  t.ok(Math.abs(claims.auth_time - Date.now() / 1000) < 5)
  t.ok(cookieOf(res, 'access_token')?.value, 'the access cookie')
  t.ok(cookieOf(res, 'refresh_token')?.value, 'the refresh cookie')
  t.equal(res.headers['cache-control'], 'no-store')

  // a refresh keeps how and when the session signed in
  const refreshed = await post(app, '/auth/refresh', { refresh_token: body.refresh_token })
  t.equal(refreshed.statusCode, 200)
  const after = claimsOf(refreshed.json().access_token)
  t.same([after.aal, after.amr, after.auth_time], ['aal1', ['email'], claims.auth_time])

  const twice = await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))
  t.equal(twice.statusCode, 400, 'single use')
  t.same(twice.json(), INVALID_OTP)
})

t.test('without remember, no cookies; a password sign-in says amr ["pwd"]', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const res = await post(app, '/auth/verify-otp', verify(user.email, await codeFor(app, user.email, 'login'), 'login'))
  t.equal(res.statusCode, 200)
  t.equal(res.headers['set-cookie'], undefined)
  const pwd = await post(app, '/auth/login', { email: user.email, password: user.password })
  t.same(claimsOf(pwd.json().access_token).amr, ['pwd'])
})

t.test('after EMAIL_OTP_MAX_ATTEMPTS wrong codes the code is spent, the right one fails too', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const code = await codeFor(app, user.email, 'login')
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
  for (let i = 0; i < 5; i++) {
    const res = await post(app, '/auth/verify-otp', verify(user.email, wrong, 'login'))
    t.equal(res.statusCode, 400)
    t.same(res.json(), INVALID_OTP)
  }
  const right = await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))
  t.equal(right.statusCode, 400)
  t.same(right.json(), INVALID_OTP)
})

t.test('four wrong codes leave the right one usable (the negative control of the limit)', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const code = await codeFor(app, user.email, 'login')
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
  for (let i = 0; i < 4; i++) t.equal((await post(app, '/auth/verify-otp', verify(user.email, wrong, 'login'))).statusCode, 400)
  t.equal((await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))).statusCode, 200)
})

t.test('a code is good for its purpose only; verify_email sets email_verified', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const code = await codeFor(app, user.email, 'verify_email')
  t.equal((await delivered(app, user.email, 1)).subject, 'Confirm your email address for gatehouse')
  const asLogin = await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))
  t.equal(asLogin.statusCode, 400)
  t.same(asLogin.json(), INVALID_OTP)
  const res = await post(app, '/auth/verify-otp', verify(user.email, code, 'verify_email'))
  t.equal(res.statusCode, 200)
  t.same(res.json(), { email_verified: true })
  const signedIn = await post(app, '/auth/login', { email: user.email, password: user.password })
  t.equal(signedIn.json().user.email_verified, true)
})

t.test('a newer send voids the older code', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const older = await codeFor(app, user.email, 'login')
  let newer = await codeFor(app, user.email, 'login')
  // two draws may match (one in a million): draw again so the test means what it says
  while (newer === older) newer = await codeFor(app, user.email, 'login')
  const old = await post(app, '/auth/verify-otp', verify(user.email, older, 'login'))
  t.equal(old.statusCode, 400)
  t.same(old.json(), INVALID_OTP)
  t.equal((await post(app, '/auth/verify-otp', verify(user.email, newer, 'login'))).statusCode, 200)
})

t.test('an unknown address or an expired code is the same 400 invalid_otp', async (t) => {
  const app = await recoveryApp(t, { EMAIL_OTP_TTL: '1s' })
  const user = await createUser(app)
  const unknown = await post(app, '/auth/verify-otp', verify('nobody@example.com', '123456', 'login'))
  t.equal(unknown.statusCode, 400)
  t.same(unknown.json(), INVALID_OTP)
  const code = await codeFor(app, user.email, 'login')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const late = await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))
  t.equal(late.statusCode, 400)
  t.same(late.json(), INVALID_OTP)
})

t.test('concurrent wrong guesses cannot outrun EMAIL_OTP_MAX_ATTEMPTS: each is counted before it is compared', async (t) => {
  const app = await recoveryApp(t, { EMAIL_OTP_ACCOUNT_MAX_FAILURES: 50 })
  const user = await createUser(app)
  const code = await codeFor(app, user.email, 'login')
  const wrong = Array.from({ length: 12 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'))
  const answers = await Promise.all(wrong.map(async (guess) => await post(app, '/auth/verify-otp', verify(user.email, guess, 'login'))))
  t.same(answers.map((res) => res.statusCode), Array(12).fill(400))
  const right = await post(app, '/auth/verify-otp', verify(user.email, code, 'login'))
  t.equal(right.statusCode, 400, 'the code was spent by the fifth wrong guess')
  t.same(right.json(), INVALID_OTP)
})

const RATE_LIMITED = { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' }

t.test('wrong email codes count per address across client addresses: EMAIL_OTP_ACCOUNT_MAX_FAILURES, then 429 even for the right code; an unknown address alike', async (t) => {
  const app = await recoveryApp(t, { EMAIL_OTP_ACCOUNT_MAX_FAILURES: 6, EMAIL_OTP_ACCOUNT_MAX_MAILS: 50 })
  const user = await createUser(app)
  const from = async (ip: string, email: string, code: string) => await app.inject({ method: 'POST', url: '/auth/verify-otp', payload: verify(email, code, 'login'), remoteAddress: ip })
  const statuses: number[] = []
  for (let n = 0; n < 4; n++) {
    const code = await codeFor(app, user.email, 'login')
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
    for (let i = 0; i < 2; i++) statuses.push((await from(`192.0.2.${50 + n}`, user.email, wrong)).statusCode)
  }
  t.strictSame(statuses, [400, 400, 400, 400, 400, 400, 429, 429], 'six wrong codes over three addresses, then 429 on a fourth')
  const code = await codeFor(app, user.email, 'login')
  const right = await from('198.51.100.9', user.email, code)
  t.equal(right.statusCode, 429, 'the right code too, once the bound is reached')
  t.strictSame(right.json(), RATE_LIMITED)
  t.ok(Number(right.headers['retry-after']) > 86_000, 'Retry-After: the rest of the day-long window')

  const unknown: number[] = []
  for (let i = 0; i < 7; i++) unknown.push((await from(`192.0.2.${60 + i}`, 'nobody@example.com', '123456')).statusCode)
  t.strictSame(unknown, [400, 400, 400, 400, 400, 400, 429], 'an unknown address is counted the same: a 429 reveals no account')
})

t.test('code mails per account are bounded for addresses it never signed in from; its own address still gets a code', async (t) => {
  const app = await recoveryApp(t, { EMAIL_OTP_ACCOUNT_MAX_MAILS: 3 })
  const user = await createUser(app)
  for (let i = 0; i < 8; i++) {
    const res = await app.inject({ method: 'POST', url: '/auth/send-otp', payload: { email: user.email, purpose: 'login' }, remoteAddress: `192.0.2.${70 + i}` })
    t.equal(res.statusCode, 202)
  }
  t.equal((await queued(app, user.email)).length, 3, 'eight requests from eight addresses: three mails')
  // the real user, where they signed in before, still gets one
  const signedIn = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password }, remoteAddress: '203.0.113.5' })
  t.equal(signedIn.statusCode, 200)
  const own = await app.inject({ method: 'POST', url: '/auth/send-otp', payload: { email: user.email, purpose: 'login' }, remoteAddress: '203.0.113.5' })
  t.equal(own.statusCode, 202)
  t.equal((await queued(app, user.email)).length, 4, 'a code for the account\'s own address')
})

t.test('a send-otp whose outbox write fails gives its place in EMAIL_OTP_ACCOUNT_MAX_MAILS back: the retry sends the code', async (t) => {
  const app = await recoveryApp(t, { EMAIL_OTP_ACCOUNT_MAX_MAILS: 1 })
  const user = await createUser(app)
  failOutboxWrites(t)
  const send = async () => await app.inject({ method: 'POST', url: '/auth/send-otp', payload: { email: user.email, purpose: 'login' }, remoteAddress: '192.0.2.90' })
  const failed = await send()
  t.equal(failed.statusCode, 202, 'the answer does not depend on the write')
  t.same(await queued(app, user.email), [], 'nothing was written')
  t.equal((await send()).statusCode, 202)
  t.equal((await queued(app, user.email)).length, 1, 'the retry is queued: the failed write used up no place')
  // the negative control: the bound still holds once a mail is written
  t.equal((await send()).statusCode, 202)
  t.equal((await queued(app, user.email)).length, 1, 'a second mail from a foreign address is over the bound')
})
