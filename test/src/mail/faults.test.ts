// Proves src/mail/sender.ts and src/mail/transport.ts.
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { createMailTransport } from '../../../src/mail/transport.js'
import { passwordResetMail } from '../../../src/mail/templates.js'
import { build } from '../../helper.js'
import { enqueue, waitForRow } from '../../mail/outbox.js'
import { startCaptureServer } from '../../mail/smtp-capture.js'

/*
 * What SMTP trouble does to the app: nothing to the path that enqueues (a request's), only to
 * when the mail goes out.
 */

const reset = (to: string) => passwordResetMail({ to, link: `https://app.example.com/reset#token=for-${to}`, expiresInMinutes: 30 })
const STALL_MS = 2000

t.test('a server that stalls DATA never delays the enqueue path; the mails arrive once it answers', async (t) => {
  const smtp = await startCaptureServer(t, { stallDataMs: STALL_MS })
  const app = await build(t, { SMTP_URL: smtp.url })
  await enqueue(app, reset('first@example.com'))
  await smtp.dataStarted()

  // while the sender is held in DATA, requests keep enqueueing: each transaction-and-wake is timed
  const times: number[] = []
  for (let i = 0; i < 10; i++) {
    const start = performance.now()
    await enqueue(app, reset(`queued-${i}@example.com`))
    times.push(performance.now() - start)
  }
  // a bound well under the stall, loose enough for a loaded machine (an enqueue takes a few ms)
  t.ok(Math.max(...times) < STALL_MS / 2, `each enqueue answered at once while the server stalled (slowest ${Math.round(Math.max(...times))} ms)`)

  // the negative control: sending inside the path would have cost the stall
  const transport = createMailTransport(app.config.mail, false, app.log)
  t.ok(transport)
  const start = performance.now()
  await transport?.send(reset('inline@example.com'))
  const inline = performance.now() - start
  t.ok(inline >= STALL_MS - 50, `a send in the path would have waited for the server (${Math.round(inline)} ms)`)
  transport?.close()

  for (let i = 0; i < 10; i++) await smtp.waitForMail((m) => m.to === `queued-${i}@example.com`, 20_000)
  await smtp.waitForMail((m) => m.to === 'first@example.com')
  t.equal(smtp.mails.length, 12, 'every mail once (the ten, the first, the inline one)')
})

t.test('with the server down the row is retried with its error recorded, and the mail arrives once it is back', async (t) => {
  const smtp = await startCaptureServer(t)
  await smtp.stop()
  const app = await build(t, { SMTP_URL: smtp.url, METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' })
  const start = performance.now()
  const id = await enqueue(app, reset('patient@example.com'))
  t.ok(performance.now() - start < 1000, 'the enqueue answered at once with the server down')
  const failing = await waitForRow(app.store, id, (r) => r.attempts >= 2 && !r.claimed)
  t.match(failing, { sentAt: null, abandonedAt: null, lastError: /ECONNREFUSED/, subject: 'Reset your gatehouse password' })
  t.ok(Date.parse(failing.dueAt) > Date.now(), 'due again later: backoff')

  await smtp.start()
  const back = Date.now()
  const mail = await smtp.waitForMail((m) => m.to === 'patient@example.com', 60_000)
  t.ok(Date.now() - back < 60_000, `arrived ${Date.now() - back} ms after the server came back`)
  t.ok(mail.text.includes('https://app.example.com/reset#token=for-patient@example.com'))
  const sent = await waitForRow(app.store, id, (r) => r.sentAt !== null)
  t.match(sent, { lastError: null, text: null })
  t.ok(sent.attempts >= 3)

  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789abcdef' } })
  t.match(metrics.body, /^gatehouse_mail_deliveries_total\{outcome="sent"\} 1$/m)
  const retried = /^gatehouse_mail_deliveries_total\{outcome="retried"\} (\d+)$/m.exec(metrics.body)
  t.equal(Number(retried?.[1]), sent.attempts - 1, 'each failed attempt counted as a retry')
  t.match(metrics.body, /^gatehouse_mail_deliveries_total\{outcome="abandoned"\} 0$/m)
})

t.test('a recipient the server refuses for good is abandoned at once with the reason, and counted', async (t) => {
  const smtp = await startCaptureServer(t, { refuseRecipient: (to) => to === 'gone@example.com' ? { code: 550, message: 'No such user here' } : undefined })
  const app = await build(t, { SMTP_URL: smtp.url, METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' })
  const gone = await enqueue(app, reset('gone@example.com'))
  const here = await enqueue(app, reset('here@example.com'))
  await smtp.waitForMail((m) => m.to === 'here@example.com')
  await waitForRow(app.store, here, (r) => r.sentAt !== null)
  const row = await waitForRow(app.store, gone, (r) => r.abandonedAt !== null)
  t.match(row, { attempts: 1, sentAt: null, subject: null, text: null, html: null, lastError: /^abandoned after refused for good: EENVELOPE 550 .*No such user here/ })
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789abcdef' } })
  t.match(metrics.body, /^gatehouse_mail_deliveries_total\{outcome="abandoned"\} 1$/m)
  t.match(metrics.body, /^gatehouse_mail_deliveries_total\{outcome="sent"\} 1$/m)
  t.match(metrics.body, /^gatehouse_mail_deliveries_total\{outcome="retried"\} 0$/m)
})

t.test('closing the app lets a delivery under way finish: the row ends sent, not claimed', async (t) => {
  const smtp = await startCaptureServer(t, { stallDataMs: 1000 })
  const app = await build(t, { SMTP_URL: smtp.url })
  const id = await enqueue(app, reset('closing@example.com'))
  await smtp.dataStarted()
  const store = app.store
  let sentAt: string | null = null
  t.intercept(store, 'close', { value: async () => { sentAt = (await store.mailOutbox.get(id))?.sentAt ?? null; await Reflect.apply(Object.getPrototypeOf(store).close, store, []) } })
  await app.close()
  t.type(sentAt, 'string', 'settled before the database closed')
  t.equal(smtp.mails.length, 1)
})
