import { test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { latestMail, queued, recoveryApp } from '../recovery/support.js'
import { enrolledUser, INVALID_OTP, oathtool, testClock, TOTP_ON } from './support.js'

/*
 * A known password must not make the second factor guessable (issue 22, finding 1): a correct
 * password that only earns the challenge resets no failure count, and wrong second-factor codes
 * count per account across every address (SECOND_FACTOR_MAX_FAILURES), with a notice mail.
 */

const RATE_LIMITED = { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' }

async function app (t: Parameters<typeof recoveryApp>[0], values: Record<string, unknown> = {}) {
  const clock = testClock()
  const built = await recoveryApp(t, { ...TOTP_ON, ...values }, undefined, { clock: clock.clock })
  return Object.assign(built, { testClock: clock })
}

async function from (app: FastifyInstance, ip: string, url: string, payload: Record<string, unknown>, token?: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url, payload, remoteAddress: ip, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
}

test('alternating the right password with wrong codes from one address: 429 once LOGIN_MAX_FAILURES codes failed, the password resets nothing', async (t) => {
  const server = await app(t)
  const user = await enrolledUser(server)
  const wrong = oathtool(user.secret, server.testClock.now + 600_000)
  const seen: string[] = []
  for (let round = 0; round < 3; round++) {
    const signIn = await from(server, '192.0.2.10', '/auth/login', { email: user.email, password: user.password })
    seen.push(`login ${signIn.statusCode}`)
    if (signIn.statusCode !== 403) continue
    const { mfa_token: token } = signIn.json() as { mfa_token: string }
    for (let i = 0; i < 4; i++) seen.push(String((await from(server, '192.0.2.10', '/auth/verify-2fa', { mfa_token: token, code: wrong })).statusCode))
  }
  t.strictSame(seen, [
    'login 403', '400', '400', '400', '400',
    // the right password again: neither a failure nor a success
    'login 403', '400', '429', '429', '429',
    'login 429'
  ])
  const limited = await from(server, '192.0.2.10', '/auth/login', { email: user.email, password: user.password })
  t.equal(limited.statusCode, 429)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.strictSame(limited.json(), RATE_LIMITED)
})

test('wrong codes from many addresses count per account: SECOND_FACTOR_MAX_FAILURES, then 429 for codes everywhere, one notice mail; a recovery code still gets in', async (t) => {
  const server = await app(t, { SECOND_FACTOR_MAX_FAILURES: 6, SECOND_FACTOR_FAILURE_WINDOW: '1h' })
  const user = await enrolledUser(server)
  const wrong = oathtool(user.secret, server.testClock.now + 600_000)
  const mailsBefore = (await queued(server, user.email)).length
  const statuses: number[] = []
  for (let n = 1; n <= 4; n++) {
    const ip = `192.0.2.${20 + n}`
    const signIn = await from(server, ip, '/auth/login', { email: user.email, password: user.password })
    t.equal(signIn.statusCode, 403, `the password from ${ip} earns a challenge`)
    const { mfa_token: token } = signIn.json() as { mfa_token: string }
    for (let i = 0; i < 2; i++) statuses.push((await from(server, ip, '/auth/verify-2fa', { mfa_token: token, code: wrong })).statusCode)
  }
  t.strictSame(statuses, [400, 400, 400, 400, 400, 400, 429, 429], 'six failures over three addresses, then 429 on a fourth')

  // the right TOTP code from a fresh address is refused unchecked: guessing gains nothing
  const signIn = await from(server, '198.51.100.7', '/auth/login', { email: user.email, password: user.password })
  const { mfa_token: token } = signIn.json() as { mfa_token: string }
  const right = await from(server, '198.51.100.7', '/auth/verify-2fa', { mfa_token: token, code: oathtool(user.secret, server.testClock.now) })
  t.equal(right.statusCode, 429)
  t.strictSame(right.json(), RATE_LIMITED)
  const retryAfter = Number(right.headers['retry-after'])
  t.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After is what is left of the window (${retryAfter})`)

  // a wrong recovery code gets the same 429; a right one finishes the sign-in (the way past the lock)
  const badRecovery = await from(server, '198.51.100.7', '/auth/verify-2fa', { mfa_token: token, recovery_code: 'aaaaa-aaaaa' })
  t.equal(badRecovery.statusCode, 429)
  t.strictSame(badRecovery.json(), RATE_LIMITED)
  const recovered = await from(server, '198.51.100.7', '/auth/verify-2fa', { mfa_token: token, recovery_code: user.recoveryCodes[0] })
  t.equal(recovered.statusCode, 200, 'a recovery code gets past the lock')

  const notices = (await queued(server, user.email)).slice(mailsBefore)
  t.equal(notices.length, 1, 'one notice mail, however many codes fail beyond the bound')
  const mail = await latestMail(server, user.email)
  t.equal(mail.subject, 'Security notice for your gatehouse account')
  t.match(mail.text, /6 wrong two-factor codes were entered for your account/)
  t.match(mail.text, /recovery code/)
})

test('wrong codes at disable-2fa and recovery-codes count toward the same per-account bound', async (t) => {
  const server = await app(t, { SECOND_FACTOR_MAX_FAILURES: 3, LOGIN_MAX_FAILURES: 50 })
  const user = await enrolledUser(server)
  const wrong = oathtool(user.secret, server.testClock.now + 600_000)
  for (let i = 0; i < 2; i++) {
    const res = await from(server, `192.0.2.${30 + i}`, '/auth/disable-2fa', { password: user.password, code: wrong }, user.access_token)
    t.equal(res.statusCode, 400)
    t.strictSame(res.json(), INVALID_OTP)
  }
  const third = await from(server, '192.0.2.40', '/auth/recovery-codes', { password: user.password, code: wrong }, user.access_token)
  t.equal(third.statusCode, 400)
  t.strictSame(third.json(), INVALID_OTP)
  const limited = await from(server, '192.0.2.41', '/auth/disable-2fa', { password: user.password, code: oathtool(user.secret, server.testClock.now) }, user.access_token)
  t.equal(limited.statusCode, 429, 'even the right code, once the account bound is reached')
  t.strictSame(limited.json(), RATE_LIMITED)
  const regen = await from(server, '192.0.2.41', '/auth/recovery-codes', { password: user.password, code: oathtool(user.secret, server.testClock.now) }, user.access_token)
  t.equal(regen.statusCode, 429)
})
