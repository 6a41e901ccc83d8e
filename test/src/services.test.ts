import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { Config } from '../../src/config/config.js'
import { connect, type Store } from '../../src/db/store.js'
import { ConfigError, InvalidCredentials, RateLimited } from '../../src/errors.js'
import { createServices } from '../../src/services.js'
import { PASSWORD, prepareDatabase, sessionOf, testConfig, type TestContext } from '../helper.js'

const CONTEXT = { ip: '192.0.2.7' }
const QUIET = { info () {}, warn () {}, error () {} }
const KEYS = `k1:${randomBytes(32).toString('base64')}`

async function openStore (t: TestContext, config: Config): Promise<Store> {
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  return store
}

/** A revocation as another process would have stored it, live for a minute. */
async function storeRevocation (store: Store, sessionId: string): Promise<void> {
  const now = Date.now()
  await store.revocations.record({ sessionId, userId: '', reason: 'logout', revokedAt: new Date(now).toISOString(), expiresAt: new Date(now + 60_000).toISOString() })
}

t.test('createServices builds the services without an app, and they report what they do as events', async (t) => {
  const config = testConfig(t, { LOGIN_MAX_FAILURES: 1 })
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  const services = await createServices({ config, store, log: { info () {}, warn () {}, error () {} } })
  const seen: string[] = []
  services.events.on('password', ({ operation, seconds }) => { seen.push(`password ${operation} ${seconds >= 0}`) })
  services.events.on('audit', ({ record, context }) => { seen.push(`audit ${record.event} ${context.ip}`) })
  services.events.on('throttled', ({ limiter }) => { seen.push(`throttled ${limiter}`) })

  const user = await services.users.create({ email: 'Ann@Example.com', password: PASSWORD, name: 'Ann', roles: ['user'], isSuperuser: false })
  t.equal(user.email, 'ann@example.com')
  const pair = await sessionOf(services.auth.login('ann@example.com', PASSWORD, CONTEXT))
  t.equal(services.sessions.verifyAccess(pair.accessToken).user_id, user.id)
  await t.rejects(services.auth.login('ann@example.com', 'Wrong-Password-1', CONTEXT), InvalidCredentials)
  // tap matches a class pattern by its fields, not instanceof: RateLimited is a subclass (it carries retryAfter)
  const throttled = await services.auth.login('ann@example.com', 'Wrong-Password-1', CONTEXT).catch((err: unknown) => err)
  t.ok(throttled instanceof RateLimited, 'the second failure is refused with RateLimited')

  t.same(seen, [
    'password hash true',
    'password verify true',
    `audit login_succeeded ${CONTEXT.ip}`,
    'password verify true',
    `audit login_failed ${CONTEXT.ip}`,
    'throttled login_failures'
  ])
})

t.test('start() loads the revocations, the signing keys and the admin and runs the mail sender; close() waits for the recovery work answered before it', async (t) => {
  const config = testConfig(t, {
    JWT_ALG: 'ES256',
    DATA_ENCRYPTION_KEYS: KEYS,
    ADMIN_EMAIL: 'root@example.com',
    ADMIN_PASSWORD: PASSWORD,
    ENABLE_PASSWORD_RESET: 'true',
    PASSWORD_RESET_URL: 'https://app.example.com/reset?token={token}'
  })
  const store = await openStore(t, config)
  await storeRevocation(store, 'revoked-before-start')
  const services = await createServices({ config, store, log: QUIET })
  t.teardown(() => services.close())
  t.notOk(services.revocations.has('revoked-before-start'), 'control: nothing is loaded before start()')
  t.same(await store.signingKeys.list(), [], 'control: no key before start()')

  await services.start()
  t.ok(services.revocations.has('revoked-before-start'), 'the revocation index is loaded')
  t.ok((await services.keys.list()).some((key) => key.state === 'current'), 'a signing key is current')
  t.equal((await services.users.findByEmail('root@example.com'))?.isSuperuser, true, 'the admin is bootstrapped')

  services.recovery.requestReset('root@example.com', CONTEXT)
  for (let waited = 0; (await store.mailOutbox.list())[0]?.sentAt == null && waited < 3000; waited += 20) await sleep(20)
  t.not((await store.mailOutbox.list())[0]?.sentAt ?? null, null, 'the mail sender runs: the reset mail went out')

  const bob = await services.users.create({ email: 'bob@example.com', password: PASSWORD, name: 'Bob', roles: ['user'], isSuperuser: false })
  // answered at once: the secret and the outbox row are written after this turn
  services.recovery.requestReset(bob.email, CONTEXT)
  await services.close()
  t.same((await store.mailOutbox.list()).map((mail) => mail.to), ['root@example.com', 'bob@example.com'], 'close() waited for the recovery work answered before it')
  await services.close()
  t.pass('a second close() does nothing')
})

t.test('a start refused by the stored keys rejects and stops what it had started: the revocation sync reads nothing more', async (t) => {
  const settings = { JWT_ALG: 'ES256', REVOCATION_POLL_MS: '20' }
  const config = testConfig(t, { ...settings, DATA_ENCRYPTION_KEYS: KEYS })
  const store = await openStore(t, config)
  const first = await createServices({ config, store, log: QUIET })
  await first.start()
  t.teardown(() => first.close())

  const otherKeys = `k1:${randomBytes(32).toString('base64')}`
  const refused = await createServices({ config: testConfig(t, { ...settings, DATA_ENCRYPTION_KEYS: otherKeys }), store, log: QUIET })
  const refusal: unknown = await refused.start().catch((err: unknown) => err)
  t.ok(refusal instanceof ConfigError, 'the start is refused with a ConfigError')

  await storeRevocation(store, 'revoked-after-the-refusal')
  await sleep(300)
  t.ok(first.revocations.has('revoked-after-the-refusal'), 'control: a started instance reads it within a few polls')
  t.notOk(refused.revocations.has('revoked-after-the-refusal'), 'the refused one stopped its poll')
})
