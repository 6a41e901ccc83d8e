import t from 'tap'
import { emailCodeMail, escapeHtml, passwordChangedMail, passwordResetMail, securityNoticeMail, testMail } from '../../../src/mail/templates.js'

t.test('the reset mail names the product, carries the link in both parts and nothing that tracks', async (t) => {
  const link = 'https://app.example.com/reset#token=abc&x=<script>'
  const mail = passwordResetMail({ to: 'ann@example.com', link, expiresInMinutes: 30 })
  t.equal(mail.to, 'ann@example.com')
  t.equal(mail.subject, 'Reset your gatehouse password')
  t.ok(mail.text.includes(`\n\n${link}\n\n`), 'the text part has the link alone on its line')
  t.match(mail.text, /within 30 minutes/)
  t.match(mail.text, /gatehouse\n$/)
  t.ok(mail.html.includes('<a href="https://app.example.com/reset#token=abc&amp;x=&lt;script&gt;">'), 'the link is escaped in the HTML')
  t.notMatch(mail.html, /<script>|<img|<link|<style|src=/i)
  t.equal((mail.html.match(/href=/g) ?? []).length, 1, 'one link: the one the mail is for')
})

t.test('code mails say what the code is for; values are escaped in HTML', async (t) => {
  const login = emailCodeMail({ to: 'bob@example.com', code: '123456', purpose: 'login', expiresInMinutes: 1 })
  t.equal(login.subject, 'Your gatehouse sign-in code')
  t.match(login.text, /sign in to gatehouse:\n\n123456\n\n.*within 1 minute\./)
  t.match(login.html, />123456<\/p>/)
  const verify = emailCodeMail({ to: 'bob@example.com', code: '654321', purpose: 'verify_email', expiresInMinutes: 10 })
  t.equal(verify.subject, 'Confirm your email address for gatehouse')
  t.match(verify.text, /confirm this address for gatehouse:\n\n654321/)

  const changed = passwordChangedMail({ to: '"<b>"@example.com' })
  t.equal(changed.subject, 'Your gatehouse password was changed')
  t.ok(changed.html.includes('&quot;&lt;b&gt;&quot;@example.com'))
  t.notOk(changed.html.includes('<b>'))
  const notice = securityNoticeMail({ to: 'c@example.com', what: 'Two-factor sign-in was turned off for your account.' })
  t.equal(notice.subject, 'Security notice for your gatehouse account')
  t.match(notice.text, /^Two-factor sign-in was turned off/)
  t.equal(escapeHtml('&<>"\''), '&amp;&lt;&gt;&quot;&#39;')
  t.equal(testMail({ to: 'ops@example.com' }).text, 'This is a test mail from gatehouse: mail delivery works.\n\n-- \ngatehouse\n')
})
