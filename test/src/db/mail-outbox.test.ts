import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { connect, type Store } from '../../../src/db/store.js'
import { passwordResetMail } from '../../../src/mail/templates.js'
import { prepareDatabase, rawSql, testConfig } from '../../helper.js'

/*
 * The outbox as the senders use it: enqueue in a transaction, claim, settle. Straight on the
 * store, with no app and so no sender of its own taking rows meanwhile.
 */

async function openStore (t: Test): Promise<{ store: Store, config: ReturnType<typeof testConfig> }> {
  const config = testConfig(t)
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl, { poolMax: 4 })
  t.teardown(async () => { await store.close() })
  await store.migrate()
  return { store, config }
}

const at = (ms: number) => new Date(Date.UTC(2026, 10, 24, 1, 0, 0) + ms).toISOString()
const mail = (to: string) => passwordResetMail({ to, link: `https://app.example.com/reset#token=secret-of-${to}`, expiresInMinutes: 30 })

t.test('a mail enqueued in a transaction exists only if the transaction commits', async (t) => {
  const { store } = await openStore(t)
  await t.rejects(store.transaction(async (tx) => {
    await tx.mailOutbox.enqueue(mail('rolled@example.com'), at(0))
    throw new Error('the write the mail was about failed')
  }), { message: 'the write the mail was about failed' })
  const id = await store.transaction(async (tx) => await tx.mailOutbox.enqueue(mail('kept@example.com'), at(0)))
  const rows = await store.mailOutbox.list()
  t.same(rows.map((r) => r.to), ['kept@example.com'])
  const expected = mail('kept@example.com')
  t.strictSame(await store.mailOutbox.get(id), {
    id,
    to: 'kept@example.com',
    subject: expected.subject,
    text: expected.text,
    html: expected.html,
    createdAt: at(0),
    dueAt: at(0),
    attempts: 0,
    claimed: false,
    sentAt: null,
    abandonedAt: null,
    lastError: null
  })
})

t.test('a claim takes due rows only, oldest first, once: a claimed row is not claimed again before its lease ends', async (t) => {
  const { store } = await openStore(t)
  const first = await store.mailOutbox.enqueue(mail('first@example.com'), at(0))
  const second = await store.mailOutbox.enqueue(mail('second@example.com'), at(10))
  await store.mailOutbox.enqueue(mail('later@example.com'), at(5000))

  const claimed = await store.mailOutbox.claim({ now: at(100), leaseUntil: at(60_100), limit: 10 })
  t.same(claimed.map((m) => [m.id, m.to, m.attempts]), [[first, 'first@example.com', 1], [second, 'second@example.com', 1]])
  t.equal(claimed[0]?.text, mail('first@example.com').text)
  t.same(await store.mailOutbox.claim({ now: at(100), leaseUntil: at(60_100), limit: 10 }), [], 'nothing else is due')
  const again = await store.mailOutbox.claim({ now: at(5000), leaseUntil: at(65_000), limit: 10 })
  t.same(again.map((m) => m.to), ['later@example.com'])
  // a sender that died holding rows: they come back when the lease ends, with the attempt counted
  const back = await store.mailOutbox.claim({ now: at(60_100), leaseUntil: at(120_100), limit: 1 })
  t.same(back.map((m) => [m.to, m.attempts]), [['first@example.com', 2]])
  t.not(back[0]?.claimToken, claimed[0]?.claimToken)
  t.equal(await store.mailOutbox.markSent(claimed[0]!, at(60_200)), false, 'the old claim lost the row')
})

t.test('a delivered row keeps no subject, text or html: no link or code stays in the database', async (t) => {
  const { store, config } = await openStore(t)
  const id = await store.mailOutbox.enqueue(mail('sent@example.com'), at(0))
  const [claimed] = await store.mailOutbox.claim({ now: at(0), leaseUntil: at(60_000), limit: 10 })
  t.equal(await store.mailOutbox.markSent(claimed!, at(50)), true)
  t.equal(await store.mailOutbox.markSent(claimed!, at(60)), false, 'settled once')
  t.strictSame(await store.mailOutbox.get(id), {
    id,
    to: 'sent@example.com',
    subject: null,
    text: null,
    html: null,
    createdAt: at(0),
    dueAt: at(60_000),
    attempts: 1,
    claimed: false,
    sentAt: at(50),
    abandonedAt: null,
    lastError: null
  })
  const rows = await rawSql<Record<string, unknown>>(config, sql`select * from mail_outbox`)
  t.notMatch(JSON.stringify(rows), /secret-of/)
  t.same(await store.mailOutbox.claim({ now: at(120_000), leaseUntil: at(180_000), limit: 10 }), [], 'never claimed again')
})

t.test('a failed delivery is rescheduled with its error; an abandoned row records why and is never claimed again', async (t) => {
  const { store } = await openStore(t)
  const id = await store.mailOutbox.enqueue(mail('flaky@example.com'), at(0))
  const [first] = await store.mailOutbox.claim({ now: at(0), leaseUntil: at(60_000), limit: 10 })
  t.equal(await store.mailOutbox.reschedule(first!, at(2000), 'connect ECONNREFUSED\n 127.0.0.1:25'), true)
  t.match(await store.mailOutbox.get(id), { dueAt: at(2000), attempts: 1, claimed: false, lastError: 'connect ECONNREFUSED 127.0.0.1:25', subject: mail('x').subject })
  t.same(await store.mailOutbox.claim({ now: at(1999), leaseUntil: at(61_999), limit: 10 }), [])
  const [second] = await store.mailOutbox.claim({ now: at(2000), leaseUntil: at(62_000), limit: 10 })
  t.equal(second?.attempts, 2)
  t.equal(await store.mailOutbox.abandon(second!, at(2100), `gave up after 2 attempts: ${'x'.repeat(2000)}`), true)
  const abandoned = await store.mailOutbox.get(id)
  t.match(abandoned, { abandonedAt: at(2100), sentAt: null, subject: null, text: null, html: null, attempts: 2 })
  t.equal(abandoned?.lastError?.length, 500, 'the reason is bounded')
  t.same(await store.mailOutbox.claim({ now: at(999_999), leaseUntil: at(1_999_999), limit: 10 }), [])
})

t.test('a released row is due at once and its attempt is not counted', async (t) => {
  const { store } = await openStore(t)
  const id = await store.mailOutbox.enqueue(mail('released@example.com'), at(0))
  const [claimed] = await store.mailOutbox.claim({ now: at(0), leaseUntil: at(60_000), limit: 10 })
  t.equal(await store.mailOutbox.release(claimed!, at(10)), true)
  t.match(await store.mailOutbox.get(id), { dueAt: at(10), attempts: 0, claimed: false })
  t.equal((await store.mailOutbox.claim({ now: at(10), leaseUntil: at(60_010), limit: 10 })).length, 1)
})

t.test('concurrent claims never hand out one row twice', async (t) => {
  const { store } = await openStore(t)
  for (let i = 0; i < 30; i++) await store.mailOutbox.enqueue(mail(`user-${i}@example.com`), at(i))
  const batches = await Promise.all(Array.from({ length: 6 }, async () => await store.mailOutbox.claim({ now: at(100), leaseUntil: at(60_100), limit: 7 })))
  const ids = batches.flat().map((m) => m.id)
  t.equal(ids.length, 30)
  t.equal(new Set(ids).size, 30)
})

t.test('settled rows older than a cutoff are deleted; pending ones stay', async (t) => {
  const { store } = await openStore(t)
  const sent = await store.mailOutbox.enqueue(mail('sent@example.com'), at(0))
  const pending = await store.mailOutbox.enqueue(mail('pending@example.com'), at(1))
  const recent = await store.mailOutbox.enqueue(mail('recent@example.com'), at(50_000))
  for (const claimed of await store.mailOutbox.claim({ now: at(50_000), leaseUntil: at(60_000), limit: 10 })) {
    if (claimed.id !== pending) await store.mailOutbox.markSent(claimed, at(50_000))
  }
  t.equal(await store.mailOutbox.deleteSettledBefore(at(10_000)), 1)
  t.same((await store.mailOutbox.list()).map((r) => r.id), [pending, recent])
  t.equal(await store.mailOutbox.get(sent), undefined)
})
