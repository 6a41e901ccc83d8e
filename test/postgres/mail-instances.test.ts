import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { MailSender } from '../../src/mail/sender.js'
import { passwordResetMail } from '../../src/mail/templates.js'
import { createMailTransport } from '../../src/mail/transport.js'
import { ServiceEvents } from '../../src/events.js'
import { build, tempDir } from '../helper.js'
import { enqueue, openStore, waitForRow } from '../mail/outbox.js'
import { startCaptureServer } from '../mail/smtp-capture.js'

/*
 * Two instances on one PostgreSQL database share one outbox: their senders claim with
 * FOR UPDATE SKIP LOCKED, so every row is delivered exactly once. Runs in the PostgreSQL pass
 * only (test/passes.sh).
 */

t.test('two instances sharing one outbox deliver 50 mails exactly once each, both taking part', async (t) => {
  // each message held a moment, so one sender is still busy with its batch when the other polls
  const smtp = await startCaptureServer(t, { stallDataMs: 200 })
  const dataDir = tempDir(t)
  const first = await build(t, { DATA_DIR: dataDir, SMTP_URL: smtp.url })
  const second = await build(t, { DATA_DIR: dataDir, SMTP_URL: smtp.url })
  t.equal(first.store.kind, 'postgres')
  const sentBy = [0, 0]
  first.services.events.on('mail', ({ outcome }) => { if (outcome === 'sent') sentBy[0] = (sentBy[0] ?? 0) + 1 })
  second.services.events.on('mail', ({ outcome }) => { if (outcome === 'sent') sentBy[1] = (sentBy[1] ?? 0) + 1 })

  const ids = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const app = i % 2 === 0 ? first : second
    return await enqueue(app, passwordResetMail({ to: `user-${i}@example.com`, link: `https://app.example.com/reset#token=t${i}`, expiresInMinutes: 30 }))
  }))
  for (const id of ids) await waitForRow(first.store, id, (r) => r.sentAt !== null, 60_000)
  // a second delivery of any row would have arrived by now
  await sleep(500)

  const recipients = smtp.mails.map((m) => m.to)
  t.equal(recipients.length, 50, 'exactly 50 mails')
  t.equal(new Set(recipients).size, 50, 'none twice')
  t.same([...recipients].sort(), Array.from({ length: 50 }, (_, i) => `user-${i}@example.com`).sort())
  for (const mail of smtp.mails) {
    const i = /^user-(\d+)@/.exec(mail.to)?.[1]
    t.ok(mail.text.includes(`#token=t${i ?? ''}\n`), `${mail.to} got its own link`)
  }
  t.equal((sentBy[0] ?? 0) + (sentBy[1] ?? 0), 50)
  t.ok((sentBy[0] ?? 0) > 0 && (sentBy[1] ?? 0) > 0, `both instances delivered (${sentBy.join(' + ')})`)
  const rows = await first.store.mailOutbox.list()
  t.equal(rows.length, 50)
  t.ok(rows.every((r) => r.attempts === 1 && r.sentAt !== null && r.text === null), 'each row claimed once and emptied')
})

t.test('the negative control: with a lease shorter than a delivery, the count above does catch a mail sent twice', async (t) => {
  const smtp = await startCaptureServer(t, { stallDataMs: 300 })
  const store = await openStore(t)
  const quiet = { info () {}, warn () {} }
  const senders = [0, 1].map(() => new MailSender({
    outbox: store.mailOutbox,
    transport: createMailTransport({ smtp: { host: '127.0.0.1', port: smtp.port, secure: false, requireTLS: false, auth: undefined }, from: 'gatehouse <no-reply@example.com>' }, false, quiet),
    events: new ServiceEvents(),
    log: quiet,
    pollMs: 20,
    // a claim lapses long before the server answers: the other sender takes the row again
    leaseMs: 50
  }))
  for (const sender of senders) t.teardown(async () => { await sender.close() })
  for (let i = 0; i < 5; i++) await store.mailOutbox.enqueue(passwordResetMail({ to: `dup-${i}@example.com`, link: 'https://app.example.com/reset#token=x', expiresInMinutes: 30 }))
  for (const sender of senders) sender.start()
  await smtp.waitForMail((m) => smtp.mails.filter((n) => n.to === m.to).length > 1, 10_000)
  t.ok(smtp.mails.length > new Set(smtp.mails.map((m) => m.to)).size, 'some mail arrived twice')
})
