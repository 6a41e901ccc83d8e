import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { test } from 'tap'
import { claimsOf, createUser, login, rawSql, tempDir, tokenResponse } from '../../../helper.js'
import { INVALID_OTP, oathtool, post, totpApp } from './support.js'

test('enrolment with oathtool: the secret, the URI, the QR code decoded by zbarimg, then a first code', async (t) => {
  const app = await totpApp(t, { TOTP_ISSUER: 'Example Corp' })
  const user = await createUser(app, { email: 'ada@example.com' })
  const { access_token: access, refresh_token: refresh } = await login(app, user)

  const res = await post(app, '/auth/enable-2fa', { password: user.password }, access)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as { secret: string, otpauth_uri: string, qr_svg: string }
  t.strictSame(Object.keys(body).sort(), ['otpauth_uri', 'qr_svg', 'secret'])
  t.match(body.secret, /^[A-Z2-7]{32}$/, '160 bits in base32: 32 characters, no padding')
  t.equal(body.otpauth_uri, `otpauth://totp/Example%20Corp:ada%40example.com?issuer=Example%20Corp&secret=${body.secret}&algorithm=SHA1&digits=6&period=30`)

  // the QR code: rendered by librsvg, read by zbar, two tools we did not write
  const dir = tempDir(t)
  writeFileSync(join(dir, 'qr.svg'), body.qr_svg)
  execFileSync('rsvg-convert', ['-w', '400', '-o', join(dir, 'qr.png'), join(dir, 'qr.svg')])
  t.equal(execFileSync('zbarimg', ['--raw', '-q', join(dir, 'qr.png')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(), body.otpauth_uri)

  // a wrong code does not activate
  const wrong = await post(app, '/auth/verify-2fa', { code: oathtool(body.secret, app.testClock.now + 120_000) }, access)
  t.equal(wrong.statusCode, 400)
  t.strictSame(wrong.json(), INVALID_OTP)
  t.equal((await login(app, user)).response.statusCode, 200, 'still off: a password alone signs in')

  const verified = await post(app, '/auth/verify-2fa', { code: oathtool(body.secret, app.testClock.now) }, access)
  t.equal(verified.statusCode, 200)
  const done = verified.json() as Record<string, unknown> & { recovery_codes: string[], access_token: string, refresh_token: string }
  t.equal(done.recovery_codes.length, 10)
  t.equal(new Set(done.recovery_codes).size, 10)
  for (const code of done.recovery_codes) t.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/)
  const { recovery_codes: _codes, ...tokens } = done
  t.strictSame(tokens, tokenResponse(tokens, { ...(tokens.user as object) }))
  const claims = claimsOf(done.access_token)
  t.equal(claims.aal, 'aal2')
  t.strictSame(claims.amr, ['pwd', 'otp', 'mfa'])
  t.equal(claims.session_id, claimsOf(access).session_id, 'the same session continues')
  t.equal(typeof claims.auth_time, 'number')

  // the refresh keeps the strength
  const refreshed = await post(app, '/auth/refresh', { refresh_token: done.refresh_token })
  t.equal(refreshed.statusCode, 200)
  const after = claimsOf((refreshed.json() as { access_token: string }).access_token)
  t.equal(after.aal, 'aal2')
  t.strictSame(after.amr, ['pwd', 'otp', 'mfa'])
  t.equal(after.auth_time, claims.auth_time)
  t.ok(refresh)

  // enabling again: 409
  const again = await post(app, '/auth/enable-2fa', { password: user.password }, done.access_token)
  t.equal(again.statusCode, 409)
  t.strictSame(again.json(), { error: 'Conflict', message: 'Two-factor sign-in is already enabled', code: 'totp_already_enabled' })
})

test('a wrong password is 400 invalid_password; no token is 401', async (t) => {
  const app = await totpApp(t)
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  const res = await post(app, '/auth/enable-2fa', { password: 'not-the-password' }, access)
  t.equal(res.statusCode, 400)
  t.strictSame(res.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  t.equal((await post(app, '/auth/enable-2fa', { password: user.password })).statusCode, 401)
  t.equal((await post(app, '/auth/verify-2fa', { code: '123456' })).statusCode, 401)
  const none = await post(app, '/auth/verify-2fa', { code: '123456' }, access)
  t.equal(none.statusCode, 400, 'no pending factor')
  t.strictSame(none.json(), INVALID_OTP)
})

test('20 concurrent confirmations with one code: exactly one 200, one set of recovery codes', async (t) => {
  const app = await totpApp(t)
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  const { secret } = (await post(app, '/auth/enable-2fa', { password: user.password }, access)).json() as { secret: string }
  const code = oathtool(secret, app.testClock.now)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await post(app, '/auth/verify-2fa', { code }, access)))
  t.equal(answers.filter((a) => a.statusCode === 200).length, 1, 'one success')
  t.equal(answers.filter((a) => a.statusCode === 400).length, 19, 'nineteen invalid_otp')
  const [row] = await rawSql<{ n: number | string }>(app.config, sql`select count(*) as n from recovery_codes`)
  t.equal(Number(row?.n), 10, 'ten recovery codes, not twenty sets')
})

test('a password sign-in racing the activation of TOTP keeps no single-factor session: the activation moves the credentials version on', async (t) => {
  const app = await totpApp(t)
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  const { secret } = (await post(app, '/auth/enable-2fa', { password: user.password }, access)).json() as { secret: string }
  const twoFactor = app.services.twoFactor
  if (twoFactor === undefined) throw new Error('TOTP is on')
  const isEnabled = twoFactor.isEnabled.bind(twoFactor)
  let activated: number | undefined
  // the sign-in has checked the password and found no active factor; the activation commits before its session is stored
  t.intercept(twoFactor, 'isEnabled', {
    value: async (userId: string) => {
      const enabled = await isEnabled(userId)
      if (activated === undefined) activated = (await post(app, '/auth/verify-2fa', { code: oathtool(secret, app.testClock.now) }, access)).statusCode
      return enabled
    }
  })
  const raced = await post(app, '/auth/login', { email: user.email, password: user.password })
  t.equal(activated, 200, 'the activation went through while the sign-in was in flight')
  t.equal(raced.statusCode, 401, 'the sign-in checked against the old credentials is refused')
  t.strictSame(raced.json(), { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' })
  const [row] = await rawSql<{ n: number | string }>(app.config, sql`select count(*) as n from sessions where revoked_at is null`)
  t.equal(Number(row?.n), 1, 'one live session: the enrolling one, at aal2')
})

test('confirming an enrolment counts wrong codes toward SECOND_FACTOR_MAX_FAILURES: at the bound even the right code gets 429', async (t) => {
  const app = await totpApp(t, { SECOND_FACTOR_MAX_FAILURES: 3 })
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  const { secret } = (await post(app, '/auth/enable-2fa', { password: user.password }, access)).json() as { secret: string }
  const wrong = oathtool(secret, app.testClock.now + 600_000)
  for (let i = 0; i < 3; i++) {
    const res = await post(app, '/auth/verify-2fa', { code: wrong }, access)
    t.equal(res.statusCode, 400)
    t.strictSame(res.json(), INVALID_OTP)
  }
  const limited = await post(app, '/auth/verify-2fa', { code: oathtool(secret, app.testClock.now) }, access)
  t.equal(limited.statusCode, 429, 'the right code, once the bound is reached')
  t.strictSame(limited.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
})

test('the negative control: below SECOND_FACTOR_MAX_FAILURES the right code still confirms the enrolment', async (t) => {
  const app = await totpApp(t, { SECOND_FACTOR_MAX_FAILURES: 3 })
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  const { secret } = (await post(app, '/auth/enable-2fa', { password: user.password }, access)).json() as { secret: string }
  const wrong = oathtool(secret, app.testClock.now + 600_000)
  for (let i = 0; i < 2; i++) t.equal((await post(app, '/auth/verify-2fa', { code: wrong }, access)).statusCode, 400)
  const confirmed = await post(app, '/auth/verify-2fa', { code: oathtool(secret, app.testClock.now) }, access)
  t.equal(confirmed.statusCode, 200, confirmed.body)
})
