// Proves src/mail/sender.ts and src/mail/transport.ts.
import t, { type Test } from 'tap'
import { passwordResetMail } from '../../../src/mail/templates.js'
import { build } from '../../helper.js'
import { startAiosmtpd } from '../../mail/aiosmtpd.js'
import { enqueue, waitForRow } from '../../mail/outbox.js'
import { startCaptureServer, type CapturedMail } from '../../mail/smtp-capture.js'

/*
 * An enqueued mail reaches a real SMTP server through the app's own sender: nodemailer's
 * smtp-server in this process, and Debian's aiosmtpd as a child (a stack we did not write).
 */

const FROM = 'gatehouse <no-reply@example.com>'
const LINK = 'https://app.example.com/reset#token=tok_3q2-Xy'

function assertResetMail (t: Test, mail: CapturedMail, to: string) {
  const expected = passwordResetMail({ to, link: LINK, expiresInMinutes: 30 })
  t.same(mail.envelope, { from: 'no-reply@example.com', to: [to] })
  t.equal(mail.from, '"gatehouse" <no-reply@example.com>')
  t.equal(mail.to, to)
  t.equal(mail.subject, 'Reset your gatehouse password')
  t.equal(mail.text.trim(), expected.text.trim())
  t.ok(mail.text.includes(LINK), 'the link is in the text part')
  t.ok(mail.html.includes(`<a href="${LINK}">${LINK}</a>`), 'and in the HTML part')
}

t.test('an enqueued mail is delivered to smtp-server within 5 s, and its row keeps no link', async (t) => {
  const smtp = await startCaptureServer(t)
  const app = await build(t, { SMTP_URL: smtp.url, MAIL_FROM: FROM })
  const started = Date.now()
  const id = await enqueue(app, passwordResetMail({ to: 'ann@example.com', link: LINK, expiresInMinutes: 30 }))
  const mail = await smtp.waitForMail((m) => m.envelope.to.includes('ann@example.com'), 5000)
  t.ok(Date.now() - started < 5000)
  assertResetMail(t, mail, 'ann@example.com')
  t.equal(mail.secure, false, 'plaintext to a loopback server that offers no STARTTLS, in development')
  const row = await waitForRow(app.store, id, (r) => r.sentAt !== null)
  t.match(row, { to: 'ann@example.com', subject: null, text: null, html: null, attempts: 1, claimed: false, abandonedAt: null, lastError: null })
  t.equal(smtp.mails.length, 1, 'delivered once')
})

t.test('the same mail is delivered to Debian\'s aiosmtpd and read back from its Maildir', async (t) => {
  const smtp = await startAiosmtpd(t)
  const app = await build(t, { SMTP_URL: smtp.url, MAIL_FROM: FROM })
  const id = await enqueue(app, passwordResetMail({ to: 'bob@example.com', link: LINK, expiresInMinutes: 30 }))
  const mail = await smtp.waitForMail((m) => m.to === 'bob@example.com', 5000)
  assertResetMail(t, mail, 'bob@example.com')
  const row = await waitForRow(app.store, id, (r) => r.sentAt !== null)
  t.match(row, { subject: null, text: null, html: null, attempts: 1 })
  t.equal((await smtp.mails()).length, 1)
})

t.test('mail enqueued while no sender is woken still goes out at the next poll', async (t) => {
  const smtp = await startCaptureServer(t)
  const app = await build(t, { SMTP_URL: smtp.url })
  // enqueued without a wake, as another instance or the CLI would
  await app.store.mailOutbox.enqueue(passwordResetMail({ to: 'quiet@example.com', link: LINK, expiresInMinutes: 30 }))
  const mail = await smtp.waitForMail(undefined, 5000)
  t.equal(mail.to, 'quiet@example.com')
  t.equal(mail.from, '"gatehouse" <no-reply@localhost>', 'the default MAIL_FROM')
})
