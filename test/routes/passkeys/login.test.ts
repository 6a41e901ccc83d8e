// routes/auth/passkeys.ts: signing in with a passkey (SPEC §14, §14.1)
import { sql } from 'kysely'
import { test } from 'tap'
import { authHeader, claimsOf, createUser, login, rawSql, setCookies, tokenResponse } from '../../helper.js'
import { SoftAuthenticator, type Twist } from '../../webauthn-authenticator.js'
import { auditRows, ceremony, ORIGIN, PASSKEY_INVALID, passkeyApp, post, registerWith, signInWith, testClock, userWithPasskey } from './support.js'

test('login/options: discoverable, nothing to enumerate: empty allowCredentials, no user named', async (t) => {
  const app = await passkeyApp(t)
  const res = await post(app, '/auth/passkeys/login/options', {})
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as { challenge_id: string, options: { challenge: string } }
  t.strictSame(body, {
    challenge_id: body.challenge_id,
    options: { rpId: 'auth.example.com', challenge: body.options.challenge, allowCredentials: [], timeout: 300000, userVerification: 'required' }
  })
  t.equal(Buffer.from(body.options.challenge, 'base64url').length, 32)
  const unknown = await post(app, '/auth/passkeys/login/options', { mfa_token: 'not-a-challenge' })
  t.strictSame([unknown.statusCode, unknown.json()], [400, PASSKEY_INVALID], 'an mfa_token that is no live challenge')
})

test('a user-verified passkey signs in at aal2, amr ["pop","mfa"]; remember sets the cookies; audited with detail passkey', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app, { be: true, bs: false })
  const res = await signInWith(app, user.authenticator)
  t.equal(res.statusCode, 200, res.body)
  const body = res.json() as Record<string, unknown> & { access_token: string, refresh_token: string }
  const me = (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(body.access_token) })).json() as Record<string, unknown>
  t.equal(me.id, user.id)
  t.strictSame(body, tokenResponse(body, me), 'a TokenResponse')
  const claims = claimsOf(body.access_token)
  t.strictSame([claims.aal, claims.amr, claims.user_id], ['aal2', ['pop', 'mfa'], user.id])
  t.ok(Math.abs(claims.auth_time - Date.now() / 1000) < 10)
  t.strictSame(claimsOf(body.refresh_token).amr, ['pop', 'mfa'], 'the refresh token keeps them')
  t.strictSame(setCookies(res), [], 'no cookies without remember')

  const remembered = await signInWith(app, user.authenticator, { bs: true }, { remember: true })
  t.equal(remembered.statusCode, 200)
  t.strictSame(setCookies(remembered).map((c) => c.name).sort(), ['access_token', 'refresh_token'])

  const list = (await app.inject({ method: 'GET', url: '/api/auth/passkeys', headers: authHeader(body.access_token) })).json() as { data: Array<{ last_used_at: string | null, backed_up: boolean }> }
  t.equal(list.data[0]?.backed_up, true, 'BS stored at every use')
  t.ok(list.data[0]?.last_used_at !== null, 'last_used_at written')
  const [row] = await rawSql<{ sign_count: number | string }>(app.config, sql`select sign_count from passkeys`)
  t.equal(Number(row?.sign_count), 2, 'the count of the last use')
  const signIns = (await auditRows(app)).filter((r) => r.event === 'login_succeeded')
  t.strictSame(signIns.map((r) => [r.user_id, r.detail]), [[user.id, null], [user.id, 'passkey'], [user.id, 'passkey']], 'the password sign-in, then the passkey ones')
})

test('aal1, amr ["pop"]: without UV (preferred), or with PASSKEY_SATISFIES_MFA=false', async (t) => {
  const preferred = await passkeyApp(t, { WEBAUTHN_USER_VERIFICATION: 'preferred' })
  const user = await userWithPasskey(preferred)
  const noUv = await signInWith(preferred, user.authenticator, { uv: false })
  t.equal(noUv.statusCode, 200, noUv.body)
  const weak = claimsOf((noUv.json() as { access_token: string }).access_token)
  t.strictSame([weak.aal, weak.amr], ['aal1', ['pop']])
  const withUv = claimsOf((((await signInWith(preferred, user.authenticator)).json()) as { access_token: string }).access_token)
  t.strictSame([withUv.aal, withUv.amr], ['aal2', ['pop', 'mfa']], 'negative control: with UV')

  const notMfa = await passkeyApp(t, { PASSKEY_SATISFIES_MFA: false })
  const other = await userWithPasskey(notMfa)
  const res = await signInWith(notMfa, other.authenticator)
  t.equal(res.statusCode, 200, 'a user without TOTP signs in')
  const claims = claimsOf((res.json() as { access_token: string }).access_token)
  t.strictSame([claims.aal, claims.amr], ['aal1', ['pop']])
})

test('every refused assertion is 400 passkey_invalid with one body, and signs nobody in', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app)
  const other = await userWithPasskey(app)
  const cases: Array<[string, Twist]> = [
    ['another origin', { origin: 'https://auth.example.com:8443' }],
    ['http instead of https', { origin: 'http://auth.example.com' }],
    ['crossOrigin: true', { crossOrigin: true }],
    ['a topOrigin', { topOrigin: 'https://evil.example.com' }],
    ['a topOrigin, crossOrigin true', { crossOrigin: true, topOrigin: ORIGIN }],
    ['another RP ID\'s hash', { rpId: 'example.com' }],
    ['UV off under required', { uv: false }],
    ['UP off', { up: false }],
    ['BE set, registered without', { be: true }],
    ['a registration type', { type: 'webauthn.create' }],
    ['another challenge', { challenge: Buffer.alloc(32, 2).toString('base64url') }],
    ['another user\'s handle', { userHandle: other.authenticator.credentials[0]?.userHandle ?? '' }],
    ['no user handle', { userHandle: null }]
  ]
  for (const [what, twist] of cases) {
    const res = await signInWith(app, user.authenticator, twist)
    t.equal(res.statusCode, 400, what)
    t.strictSame(res.json(), PASSKEY_INVALID, what)
  }
  const stranger = new SoftAuthenticator(ORIGIN)
  stranger.create({ challenge: 'x', rp: { id: 'auth.example.com' }, user: { id: user.authenticator.credentials[0]?.userHandle ?? '' } })
  const unknown = await signInWith(app, stranger)
  t.strictSame([unknown.statusCode, unknown.json()], [400, PASSKEY_INVALID], 'an unknown credential')

  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  const assertion = user.authenticator.get(options) as { response: { signature: string } }
  const signature = Buffer.from(assertion.response.signature, 'base64url')
  signature.writeUInt8(signature.readUInt8(signature.length - 1) ^ 1, signature.length - 1)
  const forged = await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: { ...assertion, response: { ...assertion.response, signature: signature.toString('base64url') } } })
  t.strictSame([forged.statusCode, forged.json()], [400, PASSKEY_INVALID], 'a bad signature')

  t.equal((await rawSql(app.config, sql`select id from sessions where user_id = ${user.id}`)).length, 1, 'only the password sign-in of the set-up')
  const failures = (await auditRows(app)).filter((r) => r.event === 'login_failed')
  t.equal(failures.length, cases.length + 2)
  t.ok(failures.every((r) => r.outcome === 'failure' && r.detail?.startsWith('passkey: ')), failures.map((r) => r.detail).join('; '))
  t.equal((await signInWith(app, user.authenticator)).statusCode, 200, 'negative control: the same authenticator untwisted signs in')
})

test('BE never changes: a passkey registered backup-eligible is refused without BE', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app, { be: true })
  const res = await signInWith(app, user.authenticator, { be: false })
  t.strictSame([res.statusCode, res.json()], [400, PASSKEY_INVALID])
  t.equal((await signInWith(app, user.authenticator, { be: true, bs: true })).statusCode, 200, 'negative control: BE kept, BS may change')
})

test('a sign count that does not rise is refused and audited passkey_clone_suspected; counts of 0 throughout pass', async (t) => {
  const app = await passkeyApp(t)
  const user = await userWithPasskey(app)
  t.equal((await signInWith(app, user.authenticator)).statusCode, 200, 'count 1')
  t.equal((await signInWith(app, user.authenticator, { signCount: 5 })).statusCode, 200, 'count 5: a jump is fine')
  for (const count of [5, 4, 0]) {
    const res = await signInWith(app, user.authenticator, { signCount: count })
    t.strictSame([res.statusCode, res.json()], [400, PASSKEY_INVALID], `count ${count} after 5`)
  }
  const clones = (await auditRows(app)).filter((r) => r.event === 'passkey_clone_suspected')
  t.strictSame(clones.map((r) => [r.outcome, r.user_id]), [['failure', user.id], ['failure', user.id], ['failure', user.id]])
  t.equal((await signInWith(app, user.authenticator, { signCount: 6 })).statusCode, 200, 'negative control: a higher count')

  const synced = await userWithPasskey(app, { be: true, bs: true })
  const zero = new SoftAuthenticator(ORIGIN, { be: true, bs: true }, false)
  t.equal((await registerWith(app, synced.access_token, zero)).statusCode, 201)
  for (let i = 0; i < 3; i++) t.equal((await signInWith(app, zero)).statusCode, 200, 'a count of 0, stored 0: no counter')
})

test('a login challenge is good once, for 5 minutes, for a sign-in only', async (t) => {
  const clock = testClock()
  const app = await passkeyApp(t, {}, { clock: clock.clock })
  const user = await userWithPasskey(app)
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  t.equal((await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: user.authenticator.get(options) })).statusCode, 200)
  const replay = await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: user.authenticator.get(options) })
  t.strictSame([replay.statusCode, replay.json()], [400, PASSKEY_INVALID], 'a spent challenge, even with a higher count')

  const registration = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  const crossed = await post(app, '/auth/passkeys/login/verify', {
    challenge_id: registration.challenge_id, credential: user.authenticator.get({ challenge: registration.options.challenge, rpId: 'auth.example.com' })
  })
  t.strictSame([crossed.statusCode, crossed.json()], [400, PASSKEY_INVALID], 'a registration challenge used for a sign-in')

  const late = await ceremony(app, '/auth/passkeys/login/options', {})
  clock.now += 300_000
  const expired = await post(app, '/auth/passkeys/login/verify', { challenge_id: late.challenge_id, credential: user.authenticator.get(late.options) })
  t.strictSame([expired.statusCode, expired.json()], [400, PASSKEY_INVALID], 'an expired challenge')
  const unknown = await post(app, '/auth/passkeys/login/verify', { challenge_id: 'no-such-challenge', credential: user.authenticator.get(late.options) })
  t.strictSame([unknown.statusCode, unknown.json()], [400, PASSKEY_INVALID], 'an unknown challenge id')
})

test('failures count toward LOGIN_RATE_LIMIT, with the password sign-in', async (t) => {
  const app = await passkeyApp(t, { LOGIN_RATE_LIMIT: '5/m' })
  const user = await createUser(app)
  await login(app, user)
  const garbage = { id: 'AA', rawId: 'AA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} }
  const seen: number[] = []
  for (let i = 0; i < 2; i++) {
    const options = await post(app, '/auth/passkeys/login/options', {})
    seen.push(options.statusCode)
    const { challenge_id: challengeId } = options.json() as { challenge_id: string }
    seen.push((await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: garbage })).statusCode)
  }
  const limited = await post(app, '/auth/passkeys/login/options', {})
  seen.push(limited.statusCode)
  t.strictSame(seen, [200, 400, 200, 400, 429], 'the password sign-in, two options and two failures: the sixth attempt is over 5/m')
  t.strictSame(limited.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
  t.ok(Number(limited.headers['retry-after']) > 0)
})

test('the passkeys go with their user', async (t) => {
  const app = await passkeyApp(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const user = await userWithPasskey(app)
  await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  const deleted = await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })
  t.equal(deleted.statusCode, 204)
  for (const table of ['passkeys', 'webauthn_user_handles', 'webauthn_challenges']) {
    t.strictSame(await rawSql(app.config, sql`select * from ${sql.table(table)} where user_id = ${user.id}`), [], table)
  }
  const res = await signInWith(app, user.authenticator)
  t.strictSame([res.statusCode, res.json()], [400, PASSKEY_INVALID])
})
