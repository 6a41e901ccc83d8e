import { test } from 'tap'
import { claimsOf, rawSql, setCookies, tokenResponse } from '../../../helper.js'
import { sql } from 'kysely'
import { challengeOf, enrolledUser, INVALID_OTP, oathtool, post, totpApp } from './support.js'

const CHALLENGE_KEYS = ['code', 'error', 'expires_in', 'message', 'methods', 'mfa_token', 'reason']

test('a password sign-in of a TOTP user: the exact 403 challenge, no cookie, no session; oathtool\'s code finishes it', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const sessionsBefore = await rawSql(app.config, sql<{ n: number }>`select count(*) as n from sessions`)

  const res = await post(app, '/auth/login', { email: user.email, password: user.password, remember: true })
  t.equal(res.statusCode, 403)
  t.equal(res.headers['set-cookie'], undefined, 'no cookie')
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as Record<string, unknown> & { mfa_token: string }
  t.strictSame(Object.keys(body).sort(), CHALLENGE_KEYS)
  t.strictSame(body, {
    error: 'Forbidden',
    message: 'A second factor is required',
    code: 'mfa_required',
    reason: 'mfa_required',
    mfa_token: body.mfa_token,
    methods: ['totp', 'recovery_code'],
    expires_in: 300
  })
  t.match(body.mfa_token, /^[A-Za-z0-9_-]{43}$/)
  t.strictSame(await rawSql(app.config, sql<{ n: number }>`select count(*) as n from sessions`), sessionsBefore, 'no session row')

  const done = await post(app, '/auth/verify-2fa', { mfa_token: body.mfa_token, code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 200)
  const tokens = done.json() as Record<string, unknown> & { access_token: string }
  t.strictSame(tokens, tokenResponse(tokens, tokens.user as Record<string, unknown>))
  t.strictSame(setCookies(done).map((c) => c.name).sort(), ['access_token', 'refresh_token'], 'the sign-in asked for remember')
  const claims = claimsOf(tokens.access_token)
  t.equal(claims.aal, 'aal2')
  t.strictSame(claims.amr, ['pwd', 'otp', 'mfa'])

  // single use: the same challenge again, even with a fresh code
  app.testClock.now += 30_000
  const again = await post(app, '/auth/verify-2fa', { mfa_token: body.mfa_token, code: oathtool(user.secret, app.testClock.now) })
  t.equal(again.statusCode, 400)
  t.strictSame(again.json(), INVALID_OTP)

  // without remember: no cookies
  const plain = await challengeOf(app, user)
  const quiet = await post(app, '/auth/verify-2fa', { mfa_token: plain, code: oathtool(user.secret, app.testClock.now) })
  t.equal(quiet.statusCode, 200)
  t.equal(quiet.headers['set-cookie'], undefined)
})

test('window: ±30 s accepted, ±60 s refused; replay of a step refused', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  // clear of the enrolment's step, so the step before is still unused
  app.testClock.now += 60_000
  const at = app.testClock.now
  for (const offset of [60_000, -60_000]) {
    const token = await challengeOf(app, user)
    const res = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, at + offset) })
    t.equal(res.statusCode, 400, `a code ${offset / 1000} s away is refused`)
    t.strictSame(res.json(), INVALID_OTP)
  }
  // accepted steps only move forward, so the earlier step goes first
  for (const offset of [-30_000, 30_000]) {
    const token = await challengeOf(app, user)
    const res = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, at + offset) })
    t.equal(res.statusCode, 200, `a code ${offset / 1000} s away is accepted`)
  }
  // replay: the +30 s code again, on a fresh challenge
  const token = await challengeOf(app, user)
  const replay = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, at + 30_000) })
  t.equal(replay.statusCode, 400, 'the same code twice: the second is refused')
  t.strictSame(replay.json(), INVALID_OTP)
  // negative control: the next step's code on the same challenge still works
  app.testClock.now += 60_000
  const next = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, app.testClock.now) })
  t.equal(next.statusCode, 200)
})

test('20 concurrent uses of one code on 20 challenges: exactly one 200', async (t) => {
  const app = await totpApp(t, { LOGIN_MAX_FAILURES: 50, LOGIN_ACCOUNT_MAX_FAILURES: 50, SECOND_FACTOR_MAX_FAILURES: 50, LOGIN_RATE_LIMIT: '1000/m' })
  const user = await enrolledUser(app)
  const tokens = await Promise.all(Array.from({ length: 20 }, async () => await challengeOf(app, user)))
  const code = oathtool(user.secret, app.testClock.now)
  const answers = await Promise.all(tokens.map(async (token) => await post(app, '/auth/verify-2fa', { mfa_token: token, code })))
  const statuses = answers.map((a) => a.statusCode)
  t.equal(statuses.filter((s) => s === 200).length, 1, 'one success')
  t.equal(statuses.filter((s) => s === 400).length, 19, 'nineteen invalid_otp')
})

test('the challenge expires after 5 minutes and is spent by 5 wrong codes', async (t) => {
  const app = await totpApp(t, { LOGIN_MAX_FAILURES: 50, LOGIN_ACCOUNT_MAX_FAILURES: 50 })
  const user = await enrolledUser(app)
  const wrong = oathtool(user.secret, app.testClock.now + 600_000)

  const token = await challengeOf(app, user)
  for (let i = 0; i < 5; i++) t.equal((await post(app, '/auth/verify-2fa', { mfa_token: token, code: wrong })).statusCode, 400)
  const spent = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, app.testClock.now) })
  t.equal(spent.statusCode, 400, 'the right code after five wrong ones: spent')
  t.strictSame(spent.json(), INVALID_OTP)

  const four = await challengeOf(app, user)
  for (let i = 0; i < 4; i++) t.equal((await post(app, '/auth/verify-2fa', { mfa_token: four, code: wrong })).statusCode, 400)
  t.equal((await post(app, '/auth/verify-2fa', { mfa_token: four, code: oathtool(user.secret, app.testClock.now) })).statusCode, 200, 'negative control: four wrong, then right')

  const old = await challengeOf(app, user)
  await rawSql(app.config, sql`update mfa_challenges set expires_at = ${new Date(Date.now() - 1000).toISOString()} where spent_at is null`)
  app.testClock.now += 30_000
  const expired = await post(app, '/auth/verify-2fa', { mfa_token: old, code: oathtool(user.secret, app.testClock.now) })
  t.equal(expired.statusCode, 400, 'expired')
  t.strictSame(expired.json(), INVALID_OTP)
})

test('wrong codes count toward the login throttle: 429', async (t) => {
  const app = await totpApp(t, { LOGIN_MAX_FAILURES: 3 })
  const user = await enrolledUser(app)
  const wrong = oathtool(user.secret, app.testClock.now + 600_000)
  const token = await challengeOf(app, user)
  for (let i = 0; i < 2; i++) t.equal((await post(app, '/auth/verify-2fa', { mfa_token: token, code: wrong })).statusCode, 400)
  // a third failure of the same email from this address: the password sign-in counts too
  t.equal((await post(app, '/auth/login', { email: user.email, password: 'wrong-password' })).statusCode, 401)
  const limited = await post(app, '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, app.testClock.now) })
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'rate_limited')
})

test('email-code sign-in is not touched here; a challenge needs exactly one of code and recovery_code (422)', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const token = await challengeOf(app, user)
  const both = await post(app, '/auth/verify-2fa', { mfa_token: token, code: '123456', recovery_code: user.recoveryCodes[0] })
  t.equal(both.statusCode, 422)
  const neither = await post(app, '/auth/verify-2fa', { mfa_token: token })
  t.equal(neither.statusCode, 422)
  t.equal(neither.json().code, 'validation_failed')
  const unknown = await post(app, '/auth/verify-2fa', { mfa_token: 'x'.repeat(43), code: '123456' })
  t.equal(unknown.statusCode, 400)
  t.strictSame(unknown.json(), INVALID_OTP)
})

test('exactly one of code and recovery_code: the 422 names both fields, on verify-2fa and disable-2fa alike', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const message = ['Exactly one of code and recovery_code is required']
  const body = { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { code: message, recovery_code: message } }
  const token = await challengeOf(app, user)
  for (const payload of [{ mfa_token: token, code: '123456', recovery_code: user.recoveryCodes[0] }, { mfa_token: token }]) {
    const res = await post(app, '/auth/verify-2fa', payload)
    t.equal(res.statusCode, 422)
    t.strictSame(res.json(), body, `verify-2fa with ${Object.keys(payload).join(', ')}`)
  }
  for (const payload of [{ password: user.password, code: '123456', recovery_code: user.recoveryCodes[0] }, { password: user.password }]) {
    const res = await post(app, '/auth/disable-2fa', payload, user.access_token)
    t.equal(res.statusCode, 422)
    t.strictSame(res.json(), body, `disable-2fa with ${Object.keys(payload).join(', ')}`)
  }
})

test('a right password awaiting the second factor is an answer: audited as mfa_challenge_issued (not access_denied), counted as a 403 mfa_required', async (t) => {
  const app = await totpApp(t, { METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' })
  const user = await enrolledUser(app)
  const res = await post(app, '/auth/login', { email: user.email, password: user.password })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'mfa_required')

  const denied = await app.auditTrail.page({ event: 'access_denied' }, 1, 100)
  t.strictSame(denied.entries.map((e) => e.detail), [], 'a right password is no denial')
  const issued = await app.auditTrail.page({ event: 'mfa_challenge_issued' }, 1, 100)
  t.strictSame(issued.entries.map((e) => ({ userId: e.userId, actorId: e.actorId, outcome: e.outcome, detail: e.detail })), [
    { userId: user.id, actorId: null, outcome: 'success', detail: 'pwd' }
  ])
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789abcdef' } })
  t.match(metrics.body, /^gatehouse_access_denied_total\{reason="mfa_required"\} 1$/m, 'the 403 is counted by its reason, as every 403 is')
})
