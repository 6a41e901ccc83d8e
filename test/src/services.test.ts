import t from 'tap'
import { connect } from '../../src/db/store.js'
import { InvalidCredentials, RateLimited } from '../../src/errors.js'
import { createServices } from '../../src/services.js'
import { PASSWORD, prepareDatabase, sessionOf, testConfig } from '../helper.js'

const CONTEXT = { ip: '192.0.2.7' }

t.test('createServices builds the services without an app, and they report what they do as events', async (t) => {
  const config = testConfig(t, { LOGIN_MAX_FAILURES: 1 })
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  const services = await createServices({ config, store, log: { info () {}, warn () {} } })
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
