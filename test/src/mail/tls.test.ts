// Proves src/mail/transport.ts.
import t, { type Test } from 'tap'
import { passwordResetMail } from '../../../src/mail/templates.js'
import { build } from '../../helper.js'
import { startAiosmtpd } from '../../mail/aiosmtpd.js'
import { enqueue, waitForRow } from '../../mail/outbox.js'
import { startCaptureServer } from '../../mail/smtp-capture.js'
import { selfSignedCert } from '../../mail/tls.js'

/*
 * TLS to the SMTP server: STARTTLS with a certificate made here by `openssl req -x509`, trusted
 * through the transport's `ca` option (BuildOptions.mailTransport; an operator adds a private CA
 * with NODE_EXTRA_CA_CERTS). A server without STARTTLS is refused when TLS is required, and a
 * certificate that fails the check is never answered by falling back to plaintext.
 */

const reset = (to: string) => passwordResetMail({ to, link: `https://app.example.com/reset#token=for-${to}`, expiresInMinutes: 30 })

/** The first failure recorded on the row (the sender keeps retrying it). */
async function firstFailure (t: Test, app: Awaited<ReturnType<typeof build>>, id: string): Promise<string> {
  const row = await waitForRow(app.store, id, (r) => r.lastError !== null)
  t.equal(row.sentAt, null)
  return row.lastError ?? ''
}

t.test('STARTTLS with a trusted self-signed certificate when SMTP_URL requires TLS: delivered encrypted', async (t) => {
  const tls = selfSignedCert(t)
  const smtp = await startCaptureServer(t, { tls })
  const app = await build(t, { SMTP_URL: `${smtp.url}?requireTLS=true` }, { mailTransport: { ca: tls.cert } })
  const id = await enqueue(app, reset('tls@example.com'))
  const mail = await smtp.waitForMail((m) => m.to === 'tls@example.com', 5000)
  t.equal(mail.secure, true, 'the session was upgraded with STARTTLS')
  t.ok(mail.text.includes('#token=for-tls@example.com'))
  await waitForRow(app.store, id, (r) => r.sentAt !== null)
})

t.test('the same server with a certificate nobody trusts: refused, never sent in plaintext instead', async (t) => {
  const tls = selfSignedCert(t)
  const smtp = await startCaptureServer(t, { tls })
  // STARTTLS is offered and not required by the URL: the failed upgrade still ends the attempt
  const app = await build(t, { SMTP_URL: smtp.url })
  const id = await enqueue(app, reset('untrusted@example.com'))
  t.match(await firstFailure(t, app, id), /self[- ]signed certificate/i)
  t.equal(smtp.mails.length, 0, 'nothing reached the server')
})

t.test('a plaintext-only server is refused when SMTP_URL requires TLS; the same server is used when it does not', async (t) => {
  const smtp = await startCaptureServer(t)
  const strict = await build(t, { SMTP_URL: `${smtp.url}?requireTLS=true` })
  const refused = await enqueue(strict, reset('strict@example.com'))
  t.match(await firstFailure(t, strict, refused), /STARTTLS/)
  t.equal(smtp.mails.length, 0, 'not downgraded: nothing was sent')
  await strict.close()

  // the negative control: TLS not required, the same server takes the mail (in plaintext)
  const lax = await build(t, { SMTP_URL: smtp.url })
  await enqueue(lax, reset('lax@example.com'))
  const mail = await smtp.waitForMail((m) => m.to === 'lax@example.com', 5000)
  t.equal(mail.secure, false)
  t.equal(smtp.mails.length, 1)
  t.notOk(smtp.mails.some((m) => m.to === 'strict@example.com'), 'the strict app\'s mail never went out in plaintext')
})

t.test('smtps:// speaks TLS from the first byte', async (t) => {
  const tls = selfSignedCert(t)
  const smtp = await startCaptureServer(t, { tls, secure: true })
  t.match(smtp.url, /^smtps:\/\//)
  const app = await build(t, { SMTP_URL: smtp.url }, { mailTransport: { ca: tls.cert } })
  await enqueue(app, reset('implicit@example.com'))
  const mail = await smtp.waitForMail((m) => m.to === 'implicit@example.com', 5000)
  t.equal(mail.secure, true)
})

t.test('STARTTLS to Debian\'s aiosmtpd with the self-signed certificate, and refused without trusting it', async (t) => {
  const tls = selfSignedCert(t)
  const smtp = await startAiosmtpd(t, { tls })
  const untrusting = await build(t, { SMTP_URL: `${smtp.url}?requireTLS=true` })
  const refused = await enqueue(untrusting, reset('no-ca@example.com'))
  t.match(await firstFailure(t, untrusting, refused), /self[- ]signed certificate/i)
  await untrusting.close()
  t.same(await smtp.mails(), [], 'nothing reached the server')

  const app = await build(t, { SMTP_URL: `${smtp.url}?requireTLS=true` }, { mailTransport: { ca: tls.cert } })
  await enqueue(app, reset('aio-tls@example.com'))
  const mail = await smtp.waitForMail((m) => m.to === 'aio-tls@example.com', 5000)
  t.ok(mail.text.includes('#token=for-aio-tls@example.com'))
  t.equal((await smtp.mails()).length, 1)
})
