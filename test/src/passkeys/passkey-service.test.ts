import { test } from 'tap'
import { PasskeyInvalid } from '../../../src/errors.js'
import { ceremony, passkeyApp, userWithPasskey } from '../../routes/passkeys/support.js'

/*
 * src/passkeys/passkey-service.ts called as the portal calls it, with a credential it parsed from a
 * form field: the service checks the WebAuthn JSON shape itself, after the challenge is spent.
 */

test('a credential of the wrong shape is passkey_invalid, and spends the challenge all the same', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app)
  const passkeys = app.services.passkeys
  if (passkeys === undefined) throw new Error('passkeys are on')
  const context = { ip: '127.0.0.1' }
  for (const credential of [null, 'text', { id: 'AA' }, { ...user.authenticator.get({ challenge: 'AA', rpId: 'auth.example.com' }), extra: true }]) {
    const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
    await t.rejects(passkeys.login({ challengeId, credential, remember: false }, context), PasskeyInvalid, JSON.stringify(credential)?.slice(0, 30))
    await t.rejects(passkeys.login({ challengeId, credential: user.authenticator.get(options), remember: false }, context), PasskeyInvalid, 'the challenge was spent by the refused attempt')
  }
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  const outcome = await passkeys.login({ challengeId, credential: user.authenticator.get(options), remember: true }, context)
  t.equal(outcome.status, 'signed_in', 'negative control: the right shape signs in')
  t.equal(outcome.status === 'signed_in' && outcome.remember, true)

  const registration = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  const caller = { ...JSON.parse(Buffer.from(user.access_token.split('.')[1] ?? '', 'base64url').toString()) }
  await t.rejects(passkeys.register(caller, { challengeId: registration.challenge_id, credential: { id: 'AA' } }, context), PasskeyInvalid)
  await t.rejects(passkeys.register(caller, { challengeId: registration.challenge_id, credential: user.authenticator.create(registration.options) }, context), PasskeyInvalid, 'spent')
})
