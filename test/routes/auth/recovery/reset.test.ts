import t from 'tap'
import { sql } from 'kysely'
import { authHeader, changePassword, createUser, login, PASSWORD, rawSql } from '../../../helper.js'
import { ACCEPTED, codeFor, delivered, INVALID_RESET_TOKEN, NEW_PASSWORD, post, queued, recoveryApp, RESET_URL, resetTokenFor, resetTokenIn, failOutboxWrites } from './support.js'

const REVOKED = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }
const BAD_LOGIN = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }

t.test('a reset over a real SMTP server: the mail carries the link, the reset ends every session, signs nobody in, and the token works once', async (t) => {
  const app = await recoveryApp(t, { MAIL_FROM: 'Example Accounts <accounts@example.com>' })
  const user = await createUser(app, { email: 'ann@example.com' })
  const session = await login(app, user)

  const asked = await post(app, '/auth/forgot-password', { email: ' Ann@Example.com ' })
  t.equal(asked.statusCode, 202)
  t.same(asked.json(), ACCEPTED)
  t.equal(asked.headers['cache-control'], 'no-store')
  t.same((await queued(app)).map((row) => row.to), ['ann@example.com'], 'one mail queued')
  const mail = await delivered(app, 'ann@example.com', 1)
  t.equal(mail.to, 'ann@example.com')
  t.same(mail.parsed.from?.value, [{ address: 'accounts@example.com', name: 'Example Accounts' }], 'From is MAIL_FROM')
  t.same(mail.envelope, { from: 'accounts@example.com', to: ['ann@example.com'] })
  t.equal(mail.subject, 'Reset your gatehouse password')
  const token = resetTokenIn(mail.text)
  t.match(token, /^[A-Za-z0-9_-]{43}$/, '256 random bits, base64url')
  t.ok(mail.html.includes(RESET_URL.replace('{token}', token)), 'the HTML part links to the same URL')
  const stored = await rawSql<{ secret_hash: string }>(app.config, sql`select secret_hash from one_time_secrets`)
  t.equal(stored.length, 1)
  t.not(stored[0]?.secret_hash, token, 'only a hash of the token is stored')
  t.notOk(JSON.stringify(stored).includes(token))

  const reset = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(reset.statusCode, 200)
  t.same(reset.json(), { message: 'Password changed; sign in with the new password' })
  t.equal(reset.headers['set-cookie'], undefined, 'nobody is signed in')

  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(session.access_token) })
  t.equal(me.statusCode, 401, 'the old access token is refused at once')
  t.same(me.json(), REVOKED)
  const refreshed = await post(app, '/auth/refresh', { refresh_token: session.refresh_token })
  t.equal(refreshed.statusCode, 401, 'the old refresh token is dead')
  const old = await post(app, '/auth/login', { email: user.email, password: PASSWORD })
  t.equal(old.statusCode, 401)
  t.same(old.json(), BAD_LOGIN)
  const fresh = await post(app, '/auth/login', { email: user.email, password: NEW_PASSWORD })
  t.equal(fresh.statusCode, 200, 'the new password signs in')

  const again = await post(app, '/auth/reset-password', { token, new_password: 'Another-Secret-77' })
  t.equal(again.statusCode, 400, 'single use')
  t.same(again.json(), INVALID_RESET_TOKEN)
  const notice = await delivered(app, user.email, 2)
  t.equal(notice.subject, 'Your gatehouse password was changed', 'a notice is sent')
})

t.test('an expired, unknown or voided token is one 400 invalid_reset_token', async (t) => {
  const app = await recoveryApp(t, { PASSWORD_RESET_TTL: '1s' })
  const user = await createUser(app)
  const expired = await resetTokenFor(app, user.email)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const late = await post(app, '/auth/reset-password', { token: expired, new_password: NEW_PASSWORD })
  t.equal(late.statusCode, 400)
  t.same(late.json(), INVALID_RESET_TOKEN)
  const unknown = await post(app, '/auth/reset-password', { token: 'A'.repeat(43), new_password: NEW_PASSWORD })
  t.equal(unknown.statusCode, 400)
  t.same(unknown.json(), INVALID_RESET_TOKEN)
  const login2 = await post(app, '/auth/login', { email: user.email, password: PASSWORD })
  t.equal(login2.statusCode, 200, 'nothing changed: the old password still signs in')
})

t.test('a token is void once the password changed after it was issued', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const token = await resetTokenFor(app, user.email)
  const session = await login(app, user)
  t.equal((await changePassword(app, session.access_token, PASSWORD, 'Changed-In-Between-1')).statusCode, 200)
  const res = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(res.statusCode, 400)
  t.same(res.json(), INVALID_RESET_TOKEN)
  // the negative control: a token issued after the change works
  await app.counters.reset(`reset-mail:${user.email}`)
  const later = await resetTokenFor(app, user.email)
  t.not(later, token)
  t.equal((await post(app, '/auth/reset-password', { token: later, new_password: NEW_PASSWORD })).statusCode, 200)
})

t.test('a reset spends every outstanding token and code of the user', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const code = await codeFor(app, user.email, 'login')
  const first = await resetTokenFor(app, user.email)
  // a second token, as if issued a minute later
  await rawSql(app.config, sql`update one_time_secrets set created_at = '2000-01-01T00:00:00.000Z'`)
  await app.counters.reset(`reset-mail:${user.email}`)
  const second = await resetTokenFor(app, user.email)
  t.not(second, first)
  t.equal((await post(app, '/auth/reset-password', { token: first, new_password: NEW_PASSWORD })).statusCode, 200)
  const other = await post(app, '/auth/reset-password', { token: second, new_password: 'Another-Secret-77' })
  t.same(other.json(), INVALID_RESET_TOKEN, 'the other token is spent')
  const otp = await post(app, '/auth/verify-otp', { email: user.email, code, purpose: 'login' })
  t.equal(otp.statusCode, 400, 'the code is spent')
})

t.test('a GET on the reset link path never spends the token', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const token = await resetTokenFor(app, user.email)
  const get = await app.inject({ method: 'GET', url: `/auth/reset-password?token=${token}` })
  t.equal(get.statusCode, 405)
  t.equal(get.headers.allow, 'POST')
  const res = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(res.statusCode, 200, 'the token still works after the GET')
})

t.test('two resets with one token at once: exactly one succeeds', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const token = await resetTokenFor(app, user.email)
  const answers = await Promise.all(['First-Racer-Pass-1', 'Second-Racer-Pass-2'].map(async (password) =>
    await post(app, '/auth/reset-password', { token, new_password: password })))
  t.same(answers.map((res) => res.statusCode).sort(), [200, 400])
  const winner = answers[0]?.statusCode === 200 ? 'First-Racer-Pass-1' : 'Second-Racer-Pass-2'
  const loser = winner === 'First-Racer-Pass-1' ? 'Second-Racer-Pass-2' : 'First-Racer-Pass-1'
  t.equal((await post(app, '/auth/login', { email: user.email, password: winner })).statusCode, 200)
  t.equal((await post(app, '/auth/login', { email: user.email, password: loser })).statusCode, 401)
})

t.test('reset-password validates new_password as change-password does', async (t) => {
  const app = await recoveryApp(t)
  const res = await post(app, '/auth/reset-password', { token: 'x', new_password: 'short' })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, { new_password: ['The new_password field must be at least 8 characters'] })
  const extra = await post(app, '/auth/reset-password', { token: 'x', new_password: NEW_PASSWORD, user_id: 'me' })
  t.equal(extra.statusCode, 422)
})

t.test('a forgot-password whose outbox write fails answers the same 202, logs the failure and leaves the minute\'s allowance: the retry sends the mail', async (t) => {
  const lines: string[] = []
  const app = await recoveryApp(t, { LOG_LEVEL: 'warn' }, undefined, { logStream: { write: (line) => { lines.push(line) } } })
  const user = await createUser(app, { email: 'fay@example.com' })
  failOutboxWrites(t)

  const failed = await post(app, '/auth/forgot-password', { email: user.email })
  t.equal(failed.statusCode, 202, 'the answer does not depend on the write')
  t.same(failed.json(), ACCEPTED)
  t.same(await queued(app), [], 'nothing was written: the token and the row are one transaction')
  const logged = lines.map((line) => JSON.parse(line) as { level: number, msg: string, err?: { message: string } })
    .filter((line) => line.msg === 'account recovery: a mail request failed, no mail was queued')
  t.same(logged.map((line) => [line.level, line.err?.message]), [[40, 'disk I/O error']], 'the failure is logged')

  const retried = await post(app, '/auth/forgot-password', { email: user.email })
  t.equal(retried.statusCode, 202)
  t.same(retried.json(), ACCEPTED)
  t.same((await queued(app)).map((row) => row.to), [user.email], 'the retry within the minute is queued')
  const token = resetTokenIn((await delivered(app, user.email, 1)).text)
  const reset = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(reset.statusCode, 200, 'and its link works')
  t.same(reset.json(), { message: 'Password changed; sign in with the new password' })

  // the allowance still holds once a mail is written: a third request within the minute is silent
  const before = (await queued(app)).length
  const third = await post(app, '/auth/forgot-password', { email: user.email })
  t.equal(third.statusCode, 202)
  t.same(third.json(), ACCEPTED)
  t.equal((await queued(app)).length, before, 'no second reset mail within the minute')
})
