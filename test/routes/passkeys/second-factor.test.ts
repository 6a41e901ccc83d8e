// routes/auth/two-factor.ts and src/two-factor/two-factor-service.ts: a passkey as the second factor (SPEC §14.1, §10.3)
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { claimsOf, setCookies } from '../../helper.js'
import { SoftAuthenticator } from '../../webauthn-authenticator.js'
import { challengeOf, enrolledUser, oathtool, totpApp, type Enrolled } from '../auth/two-factor/support.js'
import { auditRows, ceremony, ORIGIN, PASSKEY_INVALID, post, registerWith, signInWith } from './support.js'

const BOTH_ON = { ENABLE_PASSKEYS: true, PUBLIC_URL: ORIGIN }

type App = Awaited<ReturnType<typeof totpApp>>

async function enrolledWithPasskey (app: App): Promise<Enrolled & { authenticator: SoftAuthenticator }> {
  const user = await enrolledUser(app)
  const authenticator = new SoftAuthenticator(ORIGIN)
  const res = await registerWith(app, user.access_token, authenticator)
  if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.body}`)
  return { ...user, authenticator }
}

/** The second-factor options of a challenge, and verify-2fa with the authenticator's assertion. */
async function finishWith (app: FastifyInstance, mfaToken: string, authenticator: SoftAuthenticator, extra: Record<string, unknown> = {}) {
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', { mfa_token: mfaToken })
  return await post(app, '/auth/verify-2fa', { mfa_token: mfaToken, challenge_id: challengeId, webauthn: authenticator.get(options), ...extra })
}

test('a TOTP user with a passkey: methods lists webauthn; the options list their passkeys; verify-2fa with it is aal2 ["pwd","pop","mfa"]', async (t) => {
  const app = await totpApp(t, BOTH_ON)
  const plain = await enrolledUser(app)
  const withoutPasskey = await post(app, '/auth/login', { email: plain.email, password: plain.password })
  t.strictSame((withoutPasskey.json() as { methods: string[] }).methods, ['totp', 'recovery_code'], 'no passkey: not offered')

  const user = await enrolledWithPasskey(app)
  const challenged = await post(app, '/auth/login', { email: user.email, password: user.password, remember: true })
  t.equal(challenged.statusCode, 403)
  const { mfa_token: mfaToken, methods } = challenged.json() as { mfa_token: string, methods: string[] }
  t.strictSame(methods, ['totp', 'recovery_code', 'webauthn'])

  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', { mfa_token: mfaToken })
  t.strictSame(options.allowCredentials, [{ id: user.authenticator.credentials[0]?.id.toString('base64url'), transports: ['internal'], type: 'public-key' }])
  const res = await post(app, '/auth/verify-2fa', { mfa_token: mfaToken, challenge_id: challengeId, webauthn: user.authenticator.get(options) })
  t.equal(res.statusCode, 200, res.body)
  const claims = claimsOf((res.json() as { access_token: string }).access_token)
  t.strictSame([claims.aal, claims.amr], ['aal2', ['pwd', 'pop', 'mfa']])
  t.strictSame(setCookies(res).map((c) => c.name).sort(), ['access_token', 'refresh_token'], 'the sign-in asked for remember')
  const signIns = (await auditRows(app)).filter((r) => r.event === 'login_succeeded' && r.user_id === user.id)
  t.equal(signIns.at(-1)?.detail, 'passkey')

  const spentOptions = await post(app, '/auth/passkeys/login/options', { mfa_token: mfaToken })
  t.strictSame([spentOptions.statusCode, spentOptions.json()], [400, PASSKEY_INVALID], 'the mfa_token is spent: no options for it')
  const again = await post(app, '/auth/verify-2fa', { mfa_token: mfaToken, challenge_id: challengeId, webauthn: user.authenticator.get(options) })
  t.strictSame([again.statusCode, again.json()], [400, PASSKEY_INVALID], 'nor a second sign-in with it')
})

test('a passkey second factor that fails is 400 passkey_invalid, counted as a wrong code; the challenge survives it', async (t) => {
  const app = await totpApp(t, BOTH_ON)
  const user = await enrolledWithPasskey(app)
  const other = await enrolledWithPasskey(app)
  const fresh = await challengeOf(app, user)
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', { mfa_token: fresh })
  const evil = await post(app, '/auth/verify-2fa', { mfa_token: fresh, challenge_id: challengeId, webauthn: user.authenticator.get(options, { origin: 'https://evil.example.com' }) })
  t.strictSame([evil.statusCode, evil.json()], [400, PASSKEY_INVALID], 'another origin')
  const theirs = await finishWith(app, fresh, other.authenticator)
  t.strictSame([theirs.statusCode, theirs.json()], [400, PASSKEY_INVALID], 'another user\'s passkey')
  const discoverable = await ceremony(app, '/auth/passkeys/login/options', {})
  const crossed = await post(app, '/auth/verify-2fa', { mfa_token: fresh, challenge_id: discoverable.challenge_id, webauthn: user.authenticator.get(discoverable.options) })
  t.strictSame([crossed.statusCode, crossed.json()], [400, PASSKEY_INVALID], 'a discoverable sign-in\'s challenge')
  const otherToken = await challengeOf(app, other)
  const forOther = await ceremony(app, '/auth/passkeys/login/options', { mfa_token: otherToken })
  const mixed = await post(app, '/auth/verify-2fa', { mfa_token: fresh, challenge_id: forOther.challenge_id, webauthn: user.authenticator.get(forOther.options) })
  t.strictSame([mixed.statusCode, mixed.json()], [400, PASSKEY_INVALID], 'the options of another user\'s challenge')
  const ok = await finishWith(app, fresh, user.authenticator)
  t.equal(ok.statusCode, 200, 'negative control: the challenge survived four failures (the fifth would spend it)')

  const noId = await post(app, '/auth/verify-2fa', { mfa_token: await challengeOf(app, user), webauthn: user.authenticator.get({ challenge: 'AA', rpId: 'auth.example.com' }) })
  t.equal(noId.statusCode, 422)
  t.strictSame((noId.json() as { errors: unknown }).errors, { challenge_id: ['The challenge_id field is required'] })
  const both = await post(app, '/auth/verify-2fa', { mfa_token: 'x', code: '123456', challenge_id: 'y', webauthn: user.authenticator.get({ challenge: 'AA', rpId: 'auth.example.com' }) })
  t.equal(both.statusCode, 422, 'a code and a passkey at once')
})

test('a passkey sign-in of a TOTP user: aal2 without a challenge by default; with PASSKEY_SATISFIES_MFA=false the TOTP challenge, no passkey offered again', async (t) => {
  const mfaApp = await totpApp(t, BOTH_ON)
  const user = await enrolledWithPasskey(mfaApp)
  const direct = await signInWith(mfaApp, user.authenticator)
  t.equal(direct.statusCode, 200)
  t.strictSame(claimsOf((direct.json() as { access_token: string }).access_token).amr, ['pop', 'mfa'])

  const app = await totpApp(t, { ...BOTH_ON, PASSKEY_SATISFIES_MFA: false })
  const strict = await enrolledWithPasskey(app)
  const res = await signInWith(app, strict.authenticator, {}, { remember: true })
  t.equal(res.statusCode, 403)
  const body = res.json() as { mfa_token: string, methods: string[], expires_in: number }
  t.strictSame(body, {
    error: 'Forbidden', message: 'A second factor is required', code: 'mfa_required', reason: 'mfa_required', mfa_token: body.mfa_token, methods: ['totp', 'recovery_code'], expires_in: 300
  })
  t.strictSame(setCookies(res), [], 'no cookies yet')
  const passkeyAgain = await finishWith(app, body.mfa_token, strict.authenticator)
  t.strictSame([passkeyAgain.statusCode, passkeyAgain.json()], [400, PASSKEY_INVALID], 'the passkey cannot also be the second factor')
  const done = await post(app, '/auth/verify-2fa', { mfa_token: body.mfa_token, code: oathtool(strict.secret, app.testClock.now) })
  t.equal(done.statusCode, 200, done.body)
  const claims = claimsOf((done.json() as { access_token: string }).access_token)
  t.strictSame([claims.aal, claims.amr], ['aal2', ['pop', 'otp', 'mfa']])
  t.strictSame(setCookies(done).map((c) => c.name).sort(), ['access_token', 'refresh_token'], 'remember, kept by the challenge')
})

test('WEBAUTHN_USER_VERIFICATION=preferred: a TOTP user\'s passkey without UV earns the challenge, with UV aal2 directly', async (t) => {
  const app = await totpApp(t, { ...BOTH_ON, WEBAUTHN_USER_VERIFICATION: 'preferred' })
  const user = await enrolledWithPasskey(app)
  const noUv = await signInWith(app, user.authenticator, { uv: false })
  t.equal(noUv.statusCode, 403)
  t.strictSame((noUv.json() as { methods: string[] }).methods, ['totp', 'recovery_code'])
  const withUv = await signInWith(app, user.authenticator)
  t.equal(withUv.statusCode, 200, 'negative control: with UV')
  t.strictSame(claimsOf((withUv.json() as { access_token: string }).access_token).amr, ['pop', 'mfa'])
})
