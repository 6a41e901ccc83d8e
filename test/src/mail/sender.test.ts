import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { MailOutcome } from '../../../src/events.js'
import { ServiceEvents } from '../../../src/events.js'
import { MailSender, type SenderOptions } from '../../../src/mail/sender.js'
import { createMailTransport } from '../../../src/mail/transport.js'
import { passwordResetMail } from '../../../src/mail/templates.js'
import type { Store } from '../../../src/db/store.js'
import { buildFrom, TEST_SECRET, testConfig } from '../../helper.js'
import { freePort } from '../../mail/aiosmtpd.js'
import { enqueue, openStore, waitForRow } from '../../mail/outbox.js'
import { startCaptureServer } from '../../mail/smtp-capture.js'

const reset = (to: string) => passwordResetMail({ to, link: `https://app.example.com/reset#token=for-${to}`, expiresInMinutes: 30 })
const quiet = { info () {}, warn () {} }

/** A sender on `store` delivering to `url` (a closed port unless given), with its outcomes recorded. */
async function sender (t: Test, store: Store, options: Partial<SenderOptions> & { port?: number } = {}) {
  const port = options.port ?? await freePort()
  const transport = createMailTransport({ smtp: { host: '127.0.0.1', port, secure: false, requireTLS: false, auth: undefined }, from: 'gatehouse <no-reply@example.com>' }, false, quiet)
  const events = new ServiceEvents()
  const outcomes: MailOutcome[] = []
  events.on('mail', ({ outcome }) => { outcomes.push(outcome) })
  const mail = new MailSender({ outbox: store.mailOutbox, transport, events, log: quiet, pollMs: 20, maxBackoffMs: 20, ...options })
  t.teardown(async () => { await mail.close() })
  return { mail, outcomes }
}

t.test('a row that keeps failing is abandoned after the attempt bound, with the reason recorded', async (t) => {
  const store = await openStore(t)
  const { mail, outcomes } = await sender(t, store, { maxAttempts: 3 })
  mail.start()
  const id = await store.mailOutbox.enqueue(reset('never@example.com'))
  mail.wake()
  const row = await waitForRow(store, id, (r) => r.abandonedAt !== null)
  t.match(row, { attempts: 3, sentAt: null, subject: null, text: null, html: null, claimed: false, lastError: /^abandoned after 3 attempts: E[A-Z]+ connect ECONNREFUSED 127\.0\.0\.1:\d+$/ })
  t.same(outcomes, ['retried', 'retried', 'abandoned'])
})

t.test('a row older than the age bound is abandoned at its next failure', async (t) => {
  const store = await openStore(t)
  const id = await store.mailOutbox.enqueue(reset('old@example.com'))
  // this sender's clock is two hours on: the row is past the one-hour bound
  const { mail, outcomes } = await sender(t, store, { clock: () => Date.now() + 7_200_000 })
  mail.start()
  const row = await waitForRow(store, id, (r) => r.abandonedAt !== null)
  t.match(row, { attempts: 1, lastError: /^abandoned after 720\d s: E[A-Z]+ connect ECONNREFUSED/ })
  t.same(outcomes, ['abandoned'])
})

t.test('closing while a claim is under way releases the claimed rows untried, their attempt not counted', async (t) => {
  const store = await openStore(t)
  const smtp = await startCaptureServer(t)
  const id = await store.mailOutbox.enqueue(reset('released@example.com'))
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let claiming: () => void = () => {}
  const claimed = new Promise<void>((resolve) => { claiming = resolve })
  const claim = store.mailOutbox.claim.bind(store.mailOutbox)
  t.intercept(store.mailOutbox, 'claim', { value: async (options: Parameters<typeof claim>[0]) => { const rows = await claim(options); claiming(); await gate; return rows } })
  const { mail, outcomes } = await sender(t, store, { port: smtp.port })
  mail.start()
  await claimed
  const closing = mail.close()
  open()
  await closing
  t.match(await store.mailOutbox.get(id), { attempts: 0, claimed: false, sentAt: null, abandonedAt: null })
  t.equal(smtp.mails.length, 0)
  t.same(outcomes, [])
  mail.wake()
  mail.start()
  await sleep(60)
  t.equal(smtp.mails.length, 0, 'a closed sender stays closed')
})

t.test('in development without SMTP_URL each mail, link included, is written to the log and the row settled', async (t) => {
  const lines: string[] = []
  const app = await buildFrom(t, testConfig(t, { LOG_LEVEL: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.equal(app.services.mail.enabled, true)
  const id = await enqueue(app, reset('newcomer@example.com'))
  await waitForRow(app.store, id, (r) => r.sentAt !== null)
  const records = lines.map((line) => JSON.parse(line) as { level: number, msg: string, mail?: { from: string, to: string, subject: string, text: string } })
  const written = records.filter((r) => r.mail !== undefined)
  t.equal(written.length, 1)
  t.match(written[0], {
    level: 40,
    msg: 'mail written to the log, not sent: SMTP_URL is unset (development only)',
    mail: { from: 'gatehouse <no-reply@localhost>', to: 'newcomer@example.com', subject: 'Reset your gatehouse password', text: reset('newcomer@example.com').text }
  })
  t.ok(written[0]?.mail?.text.includes('https://app.example.com/reset#token=for-newcomer@example.com'))
})

t.test('in production without SMTP_URL nothing is sent and nothing is logged: the row waits', async (t) => {
  const lines: string[] = []
  const config = testConfig(t, { APP_ENV: 'production', JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'info' })
  t.equal(createMailTransport(config.mail, true, quiet), undefined)
  const app = await buildFrom(t, config, { logStream: { write: (line) => { lines.push(line) } } })
  t.equal(app.services.mail.enabled, false)
  const id = await enqueue(app, reset('prod@example.com'))
  // longer than the sender's poll: a running sender would have taken the row by now
  await sleep(1200)
  t.match(await app.store.mailOutbox.get(id), { attempts: 0, claimed: false, sentAt: null, subject: 'Reset your gatehouse password' })
  t.notMatch(lines.join(''), /prod@example\.com|token=for-/)
})

t.test('a wake delivers at once; without one the row waits for the next poll', async (t) => {
  const store = await openStore(t)
  const smtp = await startCaptureServer(t)
  const { mail } = await sender(t, store, { port: smtp.port, pollMs: 60_000 })
  mail.start()
  await sleep(100)
  // the negative control: enqueued without a wake, nothing goes out before the (here one-minute) poll
  await store.mailOutbox.enqueue(reset('unwoken@example.com'))
  await sleep(300)
  t.equal(smtp.mails.length, 0)
  await store.mailOutbox.enqueue(reset('woken@example.com'))
  mail.wake()
  await smtp.waitForMail((m) => m.to === 'woken@example.com', 2000)
  await smtp.waitForMail((m) => m.to === 'unwoken@example.com', 2000)
  t.equal(smtp.mails.length, 2, 'the pass the wake started took every due row')
})

t.test('database failures while reading, settling or pruning the outbox are logged once and never stop the sender', async (t) => {
  const store = await openStore(t)
  const smtp = await startCaptureServer(t)
  const lines: Array<[string, string]> = []
  const log = { info (fields: object, message: string) { lines.push(['info', message]) }, warn (fields: object, message: string) { lines.push(['warn', message]) } }
  const claim = store.mailOutbox.claim.bind(store.mailOutbox)
  let failures = 3
  t.intercept(store.mailOutbox, 'claim', { value: async (options: Parameters<typeof claim>[0]) => { if (failures-- > 0) throw new Error('connection terminated'); return await claim(options) } })
  t.intercept(store.mailOutbox, 'deleteSettledBefore', { value: async () => { throw new Error('connection terminated') } })
  const markSent = store.mailOutbox.markSent.bind(store.mailOutbox)
  let settleFailures = 1
  t.intercept(store.mailOutbox, 'markSent', { value: async (...args: Parameters<typeof markSent>) => { if (settleFailures-- > 0) throw new Error('connection terminated'); return await markSent(...args) } })
  const { mail, outcomes } = await sender(t, store, { port: smtp.port, log, leaseMs: 100 })
  const id = await store.mailOutbox.enqueue(reset('db-trouble@example.com'))
  mail.start()
  await smtp.waitForMail()
  // the first delivery could not be recorded: the lease brings the row back and it is sent again, then recorded
  const row = await waitForRow(store, id, (r) => r.sentAt !== null)
  t.equal(row.attempts, 2)
  t.equal(smtp.mails.length, 2, 'an unrecorded delivery is repeated (at least once, never lost)')
  t.same(outcomes, ['sent', 'sent'])
  t.same(lines, [
    ['warn', 'reading the mail outbox failed; retrying every poll'],
    ['info', 'reading the mail outbox works again'],
    ['warn', 'settling a mail outbox row failed']
  ])
})
