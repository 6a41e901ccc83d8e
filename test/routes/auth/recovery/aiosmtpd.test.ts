import t from 'tap'
import { authHeader, createUser, login, PASSWORD } from '../../../helper.js'
import { startAiosmtpd } from '../../../mail/aiosmtpd.js'
import { delivered, INVALID_RESET_TOKEN, NEW_PASSWORD, post, recoveryApp, resetTokenIn } from './support.js'

t.test('the reset flow passes against an SMTP stack we did not write (Debian aiosmtpd, a Maildir)', async (t) => {
  const smtp = await startAiosmtpd(t)
  const app = await recoveryApp(t, { MAIL_FROM: 'Example Accounts <accounts@example.com>' }, smtp)
  const user = await createUser(app, { email: 'bob@example.com' })
  const session = await login(app, user)

  t.equal((await post(app, '/auth/forgot-password', { email: user.email })).statusCode, 202)
  const mail = await delivered(app, user.email, 1)
  t.equal(mail.to, 'bob@example.com')
  t.same(mail.parsed.from?.value, [{ address: 'accounts@example.com', name: 'Example Accounts' }])
  t.equal(mail.subject, 'Reset your gatehouse password')
  const token = resetTokenIn(mail.text)

  const reset = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(reset.statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(session.access_token) })).statusCode, 401)
  t.equal((await post(app, '/auth/refresh', { refresh_token: session.refresh_token })).statusCode, 401)
  t.equal((await post(app, '/auth/login', { email: user.email, password: PASSWORD })).statusCode, 401)
  t.equal((await post(app, '/auth/login', { email: user.email, password: NEW_PASSWORD })).statusCode, 200)
  const again = await post(app, '/auth/reset-password', { token, new_password: NEW_PASSWORD })
  t.equal(again.statusCode, 400)
  t.same(again.json(), INVALID_RESET_TOKEN)
  // a Maildir has no order: the notice is found by its subject
  const notice = await smtp.waitForMail((m) => m.subject === 'Your gatehouse password was changed')
  t.equal(notice.to, 'bob@example.com')
})
