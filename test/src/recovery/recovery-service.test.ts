import t from 'tap'
import { InvalidOtp } from '../../../src/errors.js'
import { KeyedHash } from '../../../src/crypto/keyed-hash.js'
import { buildFrom, createUser, testConfig } from '../../helper.js'
import { startCaptureServer } from '../../mail/smtp-capture.js'

const RESET_ON = { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}', ENABLE_EMAIL_OTP: true }

t.test('with the features off the service queues nothing and accepts no code', async (t) => {
  const app = await buildFrom(t, testConfig(t))
  const user = await createUser(app)
  app.services.recovery.requestReset(user.email, { ip: '127.0.0.1' })
  app.services.recovery.requestCode(user.email, 'login', { ip: '127.0.0.1' })
  await app.services.recovery.settled()
  t.same(await app.store.mailOutbox.list(), [])
  await t.rejects(app.services.recovery.verifyCode({ email: user.email, code: '123456', purpose: 'login' }, { ip: '127.0.0.1' }), InvalidOtp)
})

t.test('a mail request that fails after the answer is logged, never thrown, and writes nothing', async (t) => {
  const smtp = await startCaptureServer(t)
  const lines: string[] = []
  const config = testConfig(t, { ...RESET_ON, SMTP_URL: smtp.url, LOG_LEVEL: 'warn' })
  const app = await buildFrom(t, config, { logStream: { write: (line) => { lines.push(line) } } })
  const user = await createUser(app)
  t.intercept(app.store, 'transaction', { value: async () => { throw new Error('database went away') } })
  app.services.recovery.requestReset(user.email, { ip: '127.0.0.1' })
  await app.services.recovery.settled()
  const logged = lines.map((line) => JSON.parse(line) as { msg: string, err?: { message: string } })
    .find((line) => line.msg === 'account recovery: a mail request failed, no mail was queued')
  t.equal(logged?.err?.message, 'database went away')
  t.same(await app.store.mailOutbox.list(), [])
})

t.test('closing the app waits for a request taken just before', async (t) => {
  const smtp = await startCaptureServer(t)
  const config = testConfig(t, { ...RESET_ON, SMTP_URL: smtp.url })
  const app = await buildFrom(t, config)
  const user = await createUser(app)
  app.services.recovery.requestCode(user.email, 'verify_email', { ip: '127.0.0.1' })
  const store = app.store
  let rows = -1
  t.intercept(store, 'close', { value: async () => { rows = (await store.mailOutbox.list()).length; await Reflect.apply(Object.getPrototypeOf(store).close, store, []) } })
  await app.close()
  t.equal(rows, 1, 'the outbox row was written before the store closed')
})

t.test('verify-otp does the same work for an unknown address as for a known one with past codes', async (t) => {
  const smtp = await startCaptureServer(t)
  const app = await buildFrom(t, testConfig(t, { ...RESET_ON, SMTP_URL: smtp.url }))
  const user = await createUser(app)
  // past codes: one spent by a newer send, one live
  for (let i = 0; i < 2; i++) app.services.recovery.requestCode(user.email, 'login', { ip: '127.0.0.1' })
  await app.services.recovery.settled()

  const seen: string[] = []
  const count = <T extends object>(target: T, method: keyof T & string, name: string) => {
    const original = target[method] as (...args: unknown[]) => unknown
    t.intercept(target, method, { value: function (this: unknown, ...args: unknown[]) { seen.push(name); return original.apply(this, args) } })
  }
  count(app.store.users, 'findByEmail', 'find the user')
  count(app.store.oneTimeSecrets, 'reserveAttempt', 'reserve an attempt')
  count(app.store.oneTimeSecrets, 'spend', 'spend')
  count(KeyedHash.prototype, 'of', 'keyed hash')
  const work = async (email: string) => {
    seen.length = 0
    await t.rejects(app.services.recovery.verifyCode({ email, code: '000000', purpose: 'login' }, { ip: '127.0.0.1' }), InvalidOtp)
    return [...seen]
  }
  const known = await work(user.email)
  const unknown = await work('nobody@example.com')
  t.strictSame(known, ['find the user', 'reserve an attempt', 'keyed hash'])
  t.strictSame(unknown, known, 'the same statements and hashes, in the same order')
})
