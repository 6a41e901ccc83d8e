// Proves src/accounts/sign-in.ts (change-password).
import t from 'tap'
import { connect, transactionChannel } from '../../../src/db/store.js'
import { TokenRevoked } from '../../../src/errors.js'
import { createServices } from '../../../src/services.js'
import { PASSWORD, prepareDatabase, sessionOf, testConfig } from '../../helper.js'

const CONTEXT = { ip: '192.0.2.8' }

t.test('change-password hashes the new password before its transaction opens, then writes inside it', async (t) => {
  const config = testConfig(t)
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  const services = await createServices({ config, store, log: { info () {}, warn () {}, error () {} } })
  const user = await services.users.create({ email: 'cp@example.com', password: PASSWORD, name: 'Cy', roles: ['user'], isSuperuser: false })
  const pair = await sessionOf(services.auth.login(user.email, PASSWORD, CONTEXT))
  const other = await sessionOf(services.auth.login(user.email, PASSWORD, CONTEXT))

  // how many of this store's transactions are open, and what was open when each hash finished
  let open = 0
  let opened = 0
  const ours = (context: { store: unknown }) => context.store === store
  const subscribers = {
    start: (context: { store: unknown }) => { if (ours(context)) { open++; opened++ } },
    // after a commit or a rollback alike
    asyncEnd: (context: { store: unknown }) => { if (ours(context)) open-- },
    end () {},
    asyncStart () {},
    error () {}
  }
  transactionChannel.subscribe(subscribers)
  t.teardown(() => { transactionChannel.unsubscribe(subscribers) })
  const openAtHash: number[] = []
  services.events.on('password', ({ operation }) => { if (operation === 'hash') openAtHash.push(open) })

  await services.auth.changePassword(services.sessions.verifyAccess(pair.accessToken), PASSWORD, 'New-Password-2', CONTEXT)

  t.same(openAtHash, [0], 'one hash, with no transaction open')
  t.equal(opened, 1, 'the write ran in one transaction, which the observer saw')
  t.equal(open, 0)
  // and the change took: the new password signs in, the other session is over
  t.ok(await services.auth.login(user.email, 'New-Password-2', CONTEXT))
  await t.rejects(services.sessions.refresh(other.refreshToken, CONTEXT), TokenRevoked)
})
