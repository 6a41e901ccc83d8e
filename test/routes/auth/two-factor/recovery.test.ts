import { test } from 'tap'
import { authHeader, claimsOf, createUser, login } from '../../../helper.js'
import { codeFor, INVALID_RESET_TOKEN, latestMail, NEW_PASSWORD, queued, recoveryApp, resetTokenFor } from '../recovery/support.js'
import { enrolledUser, oathtool, post, testClock, TOTP_ON } from './support.js'

const MFA_REQUIRED = { error: 'Forbidden', message: 'A second factor is required', code: 'mfa_required', reason: 'mfa_required' }

async function app (t: Parameters<typeof recoveryApp>[0], values: Record<string, unknown> = {}) {
  const clock = testClock()
  const built = await recoveryApp(t, { ...TOTP_ON, ...values }, undefined, { clock: clock.clock })
  return Object.assign(built, { testClock: clock })
}

test('reset-password of a TOTP user needs a code; the token survives EMAIL_OTP_MAX_ATTEMPTS failures, then is spent', async (t) => {
  const server = await app(t, { EMAIL_OTP_MAX_ATTEMPTS: 3 })
  const user = await enrolledUser(server)
  const token = await resetTokenFor(server, user.email)

  const missing = await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(missing.statusCode, 403)
  t.strictSame(missing.json(), MFA_REQUIRED)
  const wrong = await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code: '000000' })
  t.equal(wrong.statusCode, 403)
  t.strictSame(wrong.json(), MFA_REQUIRED)
  const done = await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code: user.recoveryCodes[0] })
  t.equal(done.statusCode, 200, 'the token survived two failures; a recovery code completes the reset')

  const other = await enrolledUser(server)
  const second = await resetTokenFor(server, other.email)
  for (let i = 0; i < 3; i++) t.equal((await post(server, '/auth/reset-password', { token: second, new_password: NEW_PASSWORD, code: '000000' })).statusCode, 403)
  const spent = await post(server, '/auth/reset-password', { token: second, new_password: NEW_PASSWORD, code: other.recoveryCodes[1] })
  t.equal(spent.statusCode, 400, 'after EMAIL_OTP_MAX_ATTEMPTS failures the token is spent')
  t.equal(spent.json().code, 'invalid_reset_token')
})

test('email-code sign-in of a TOTP user ends in the challenge; the challenge gives amr email+otp+mfa', async (t) => {
  const server = await app(t)
  const user = await enrolledUser(server)
  const code = await codeFor(server, user.email, 'login')
  const res = await post(server, '/auth/verify-otp', { email: user.email, code, purpose: 'login', remember: true })
  t.equal(res.statusCode, 403)
  t.equal(res.headers['set-cookie'], undefined)
  const body = res.json() as { mfa_token: string }
  t.strictSame(body, { ...MFA_REQUIRED, mfa_token: body.mfa_token, methods: ['totp', 'recovery_code'], expires_in: 300 })
  const done = await post(server, '/auth/verify-2fa', { mfa_token: body.mfa_token, code: oathtool(user.secret, server.testClock.now) })
  t.equal(done.statusCode, 200)
  t.ok(done.headers['set-cookie'], 'the email-code sign-in asked for remember')
  const claims = claimsOf((done.json() as { access_token: string }).access_token)
  t.equal(claims.aal, 'aal2')
  t.strictSame(claims.amr, ['email', 'otp', 'mfa'])
})

test('each change queues a security notice, delivered over SMTP', async (t) => {
  const server = await app(t)
  const user = await enrolledUser(server)
  const enabled = await latestMail(server, user.email)
  t.match(enabled.text, /Two-factor sign-in was turned on/)
  const regen = await post(server, '/auth/recovery-codes', { password: user.password, code: oathtool(user.secret, server.testClock.now) }, user.access_token)
  t.equal(regen.statusCode, 200)
  t.match((await latestMail(server, user.email)).text, /New recovery codes/)
  server.testClock.now += 30_000
  const off = await post(server, '/auth/disable-2fa', { password: user.password, code: oathtool(user.secret, server.testClock.now) }, user.access_token)
  t.equal(off.statusCode, 204)
  t.match((await latestMail(server, user.email)).text, /turned off/)
  t.equal((await queued(server, user.email)).length, 3)
})

test('a superuser\'s DELETE /api/users/:id/2fa mails a notice only when there was a factor to turn off', async (t) => {
  const server = await app(t)
  const admin = await createUser(server, { isSuperuser: true })
  const { access_token: adminToken } = await login(server, admin)
  const del = (id: string) => server.inject({ method: 'DELETE', url: `/api/users/${id}/2fa`, headers: authHeader(adminToken) })
  const plain = await createUser(server)
  const none = await del(plain.id)
  t.equal(none.statusCode, 204)
  t.equal(none.body, '')
  t.strictSame(await queued(server), [], 'no factor, no change: the outbox stays empty')

  // the negative control: with a factor, one notice
  const enrolled = await enrolledUser(server)
  const before = (await queued(server, enrolled.email)).length
  t.equal((await del(enrolled.id)).statusCode, 204)
  const after = await queued(server, enrolled.email)
  t.equal(after.length, before + 1)
  t.match((await latestMail(server, enrolled.email)).text, /Two-factor sign-in was turned off/)
})

test('20 concurrent wrong codes on one reset token: EMAIL_OTP_MAX_ATTEMPTS are checked, each reserved first; the rest find the token spent', async (t) => {
  const server = await app(t, { SECOND_FACTOR_MAX_FAILURES: 100, LOGIN_RATE_LIMIT: '1000/m' })
  const user = await enrolledUser(server)
  const token = await resetTokenFor(server, user.email)
  const wrong = oathtool(user.secret, server.testClock.now + 600_000)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code: wrong })))
  const refused = answers.filter((a) => a.statusCode === 403)
  t.equal(refused.length, 5, 'five codes checked (EMAIL_OTP_MAX_ATTEMPTS)')
  for (const res of refused) t.strictSame(res.json(), MFA_REQUIRED)
  const spent = answers.filter((a) => a.statusCode === 400)
  t.equal(spent.length, 15, 'fifteen never checked')
  for (const res of spent) t.strictSame(res.json(), INVALID_RESET_TOKEN)
})

test('wrong codes at reset-password count toward the per-account second-factor bound', async (t) => {
  const server = await app(t, { SECOND_FACTOR_MAX_FAILURES: 3 })
  const user = await enrolledUser(server)
  const token = await resetTokenFor(server, user.email)
  const wrong = oathtool(user.secret, server.testClock.now + 600_000)
  for (let i = 0; i < 3; i++) t.equal((await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code: wrong })).statusCode, 403)
  const limited = await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code: oathtool(user.secret, server.testClock.now) })
  t.equal(limited.statusCode, 429, 'the right TOTP code, once the bound is reached')
  t.strictSame(limited.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
})

test('two resets racing with one token, each with its own recovery code: one wins, the loser keeps its recovery code', async (t) => {
  const server = await app(t)
  const user = await enrolledUser(server)
  const token = await resetTokenFor(server, user.email)
  const [first, second] = user.recoveryCodes
  const answers = await Promise.all([first, second].map(async (code) => await post(server, '/auth/reset-password', { token, new_password: NEW_PASSWORD, code })))
  t.strictSame(answers.map((a) => a.statusCode).sort(), [200, 400], 'one reset wins')
  const loser = answers[0]?.statusCode === 400 ? first : second
  t.strictSame(answers.find((a) => a.statusCode === 400)?.json(), INVALID_RESET_TOKEN)

  const signIn = await post(server, '/auth/login', { email: user.email, password: NEW_PASSWORD })
  t.equal(signIn.statusCode, 403)
  const finished = await post(server, '/auth/verify-2fa', { mfa_token: (signIn.json() as { mfa_token: string }).mfa_token, recovery_code: loser })
  t.equal(finished.statusCode, 200, 'the losing reset did not spend its recovery code')
})
