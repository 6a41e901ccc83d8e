import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildFrom } from '../helper.js'
import { SoftAuthenticator } from '../webauthn-authenticator.js'
import { ceremony, ORIGIN, passkeyApp, post, signedInUser } from '../routes/passkeys/support.js'

/*
 * src/db/webauthn-challenges.ts on PostgreSQL, where transactions run side by side: a challenge is
 * spent by one conditional update, so of concurrent verifications of one challenge exactly one
 * succeeds, across instances too. Runs in the PostgreSQL pass only (test/passes.sh).
 */

const ROUNDS = 8
const PER_INSTANCE = 3

async function twoInstances (t: Test): Promise<[FastifyInstance, FastifyInstance]> {
  const first = await passkeyApp(t, { DATABASE_POOL_MAX: 4 })
  t.equal(first.store.kind, 'postgres')
  return [first, await buildFrom(t, first.config)]
}

t.test('concurrent sign-ins with one challenge, on two instances: exactly one succeeds', async (t) => {
  const instances = await twoInstances(t)
  const user = await signedInUser(instances[0])
  // a count of 0 throughout (as synced passkeys): the sign count cannot tell the copies apart, only the challenge can
  const authenticator = new SoftAuthenticator(ORIGIN, {}, false)
  const registered = await ceremony(instances[0], '/auth/passkeys/register/options', {}, user.access_token)
  t.equal((await post(instances[0], '/auth/passkeys/register/verify', { challenge_id: registered.challenge_id, credential: authenticator.create(registered.options) }, user.access_token)).statusCode, 201)

  for (let round = 0; round < ROUNDS; round++) {
    const { challenge_id: challengeId, options } = await ceremony(instances[0], '/auth/passkeys/login/options', {})
    const attempts = instances.flatMap((app) => Array.from({ length: PER_INSTANCE }, async () =>
      (await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: authenticator.get(options) })).statusCode))
    const statuses = (await Promise.all(attempts)).sort()
    t.strictSame(statuses, [200, ...Array(2 * PER_INSTANCE - 1).fill(400)], `round ${round}: one 200`)
  }

  // negative control: the same concurrency with a challenge each lets every one through
  const each = await Promise.all(instances.flatMap((app) => Array.from({ length: PER_INSTANCE }, async () => {
    const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
    return (await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: authenticator.get(options) })).statusCode
  })))
  t.strictSame(each, Array(2 * PER_INSTANCE).fill(200), 'concurrent sign-ins as such all pass')
})

t.test('concurrent registrations with one challenge: exactly one passkey is added', async (t) => {
  const instances = await twoInstances(t)
  const user = await signedInUser(instances[0])
  const { challenge_id: challengeId, options } = await ceremony(instances[0], '/auth/passkeys/register/options', {}, user.access_token)
  const attempts = instances.flatMap((app) => Array.from({ length: PER_INSTANCE }, async () =>
    (await post(app, '/auth/passkeys/register/verify', { challenge_id: challengeId, credential: new SoftAuthenticator(ORIGIN).create(options) }, user.access_token)).statusCode))
  t.strictSame((await Promise.all(attempts)).sort(), [201, ...Array(2 * PER_INSTANCE - 1).fill(400)])
  const list = await instances[1].inject({ method: 'GET', url: '/api/auth/passkeys', headers: { authorization: `Bearer ${user.access_token}` } })
  t.equal((list.json() as { data: unknown[] }).data.length, 1)
})
