// Proves src/accounts/recent-auth.ts.
import t, { type Test } from 'tap'
import { connect } from '../../../src/db/store.js'
import { InvalidPassword, ReauthRequired, TokenRevoked } from '../../../src/errors.js'
import { createServices } from '../../../src/services.js'
import { PASSWORD, prepareDatabase, sessionOf, testConfig } from '../../helper.js'

const CONTEXT = { ip: '192.0.2.9' }

/** Services whose clock the test moves, and a user signed in at its start. */
async function signedIn (t: Test, values: Record<string, unknown> = {}) {
  const config = testConfig(t, values)
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  let now = Date.now()
  const audited: Array<{ event: string, detail?: string | undefined }> = []
  const services = await createServices({ config, store, log: { info () {}, warn () {}, error () {} }, clock: () => now })
  services.events.on('audit', ({ record }) => { audited.push({ event: record.event, detail: record.detail }) })
  const user = await services.users.create({ email: 'ra@example.com', password: PASSWORD, name: 'Ra', roles: ['user'], isSuperuser: false })
  const pair = await sessionOf(services.auth.login(user.email, PASSWORD, CONTEXT))
  const claims = services.sessions.verifyAccess(pair.accessToken)
  return { services, store, user, claims, audited, later: (seconds: number) => { now += seconds * 1000 } }
}

t.test('a sign-in within REAUTH_MAX_AGE passes without a password; older, 403 reauth_required', async (t) => {
  const { services, claims, later } = await signedIn(t, { REAUTH_MAX_AGE: '2m' })
  await services.recentAuth.require(claims, undefined, CONTEXT)
  later(claims.auth_time + 120 - Date.now() / 1000)
  await services.recentAuth.require(claims, undefined, CONTEXT)
  t.ok(services.recentAuth.isRecent(claims), 'isRecent (what the account page asks) agrees at the bound')
  later(1)
  await t.rejects(services.recentAuth.require(claims, undefined, CONTEXT), ReauthRequired, 'one second past the bound')
  t.notOk(services.recentAuth.isRecent(claims), 'and past it')
})

t.test('an old sign-in passes with the right password, and a wrong one is 400 invalid_password, audited and throttled', async (t) => {
  const { services, claims, later, audited } = await signedIn(t)
  later(3600)
  await services.recentAuth.require(claims, PASSWORD, CONTEXT)
  await t.rejects(services.recentAuth.require(claims, 'Wrong-Password-1', CONTEXT), InvalidPassword)
  t.same(audited.filter((a) => a.event === 'login_failed'), [{ event: 'login_failed', detail: 'reauth' }])
})

t.test('wrong passwords count toward the change-password throttle: past LOGIN_MAX_FAILURES even the right one is 429', async (t) => {
  const { services, claims, later } = await signedIn(t, { LOGIN_MAX_FAILURES: 2 })
  later(3600)
  for (let i = 0; i < 2; i++) await t.rejects(services.recentAuth.require(claims, 'Wrong-Password-1', CONTEXT), InvalidPassword)
  await t.rejects(services.recentAuth.require(claims, PASSWORD, CONTEXT), { statusCode: 429, code: 'RATE_LIMITED' })
  await t.rejects(services.auth.changePassword(claims, PASSWORD, 'Another-Pass-77', CONTEXT), { statusCode: 429, code: 'RATE_LIMITED' }, 'the same bucket as change-password')
})

t.test('a deleted user is refused as a revoked token, even with a password', async (t) => {
  const { services, claims, user } = await signedIn(t)
  await services.users.delete(user.id, { user_id: user.id, is_superuser: true }, CONTEXT)
  await t.rejects(services.recentAuth.require(claims, PASSWORD, CONTEXT), TokenRevoked)
})
