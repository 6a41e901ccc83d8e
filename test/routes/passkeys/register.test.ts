// routes/auth/passkeys.ts: adding a passkey (SPEC §14, §14.1, §14.2)
import { sql } from 'kysely'
import { test } from 'tap'
import { claimsOf, rawSql } from '../../helper.js'
import { latestMail, queued, recoveryApp } from '../auth/recovery/support.js'
import { SoftAuthenticator, type Twist } from '../../webauthn-authenticator.js'
import { auditRows, ceremony, ORIGIN, PASSKEY_INVALID, PASSKEYS_ON, passkeyApp, post, registerWith, signedInUser, testClock } from './support.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const REAUTH_REQUIRED = { error: 'Forbidden', message: 'Sign in again to make this change', code: 'reauth_required', reason: 'reauth_required' }

test('register/options: creation options as §14 lists them, the user handle 32 random bytes that is not the user id', async (t) => {
  const app = await passkeyApp(t)
  const user = await signedInUser(app, { name: 'Ada Lovelace' })
  const res = await post(app, '/auth/passkeys/register/options', {}, user.access_token)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as { challenge_id: string, options: { challenge: string, user: { id: string } } }
  t.match(body.challenge_id, UUID)
  const handle = Buffer.from(body.options.user.id, 'base64url')
  t.equal(handle.length, 32, 'the handle: 32 bytes')
  t.not(handle.toString('utf8'), user.id)
  t.not(body.options.user.id, Buffer.from(user.id).toString('base64url'), 'never the user id')
  t.equal(Buffer.from(body.options.challenge, 'base64url').length, 32, 'the challenge: 32 random bytes')
  t.strictSame(body.options, {
    challenge: body.options.challenge,
    rp: { name: 'gatehouse', id: 'auth.example.com' },
    user: { id: body.options.user.id, name: user.email, displayName: 'Ada Lovelace' },
    pubKeyCredParams: [{ alg: -8, type: 'public-key' }, { alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
    timeout: 300000,
    attestation: 'none',
    excludeCredentials: [],
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    extensions: { credProps: true },
    hints: []
  })
  const again = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  t.equal(again.options.user.id, body.options.user.id, 'one handle per user')
  t.not(again.options.challenge, body.options.challenge, 'a fresh challenge per ceremony')
  const [row] = await rawSql<{ challenge_hash: string }>(app.config, sql`select challenge_hash from webauthn_challenges where id = ${body.challenge_id}`)
  t.match(row?.challenge_hash, /^k:t1:[A-Za-z0-9_-]{43}$/, 'stored as a keyed hash with its key id')
  t.notOk(row?.challenge_hash.includes(body.options.challenge), 'never the challenge itself')
})

test('register/verify: 201 Passkey; then excludeCredentials lists it; WEBAUTHN_USER_VERIFICATION=preferred is said in the options', async (t) => {
  const app = await passkeyApp(t, { WEBAUTHN_USER_VERIFICATION: 'preferred', WEBAUTHN_RP_NAME: 'Example Corp' })
  const user = await signedInUser(app)
  const authenticator = new SoftAuthenticator(ORIGIN, { be: true, bs: true })
  const res = await registerWith(app, user.access_token, authenticator, {}, { name: 'My phone' })
  t.equal(res.statusCode, 201, res.body)
  const passkey = res.json() as { id: string, created_at: string }
  t.strictSame(passkey, {
    id: authenticator.credentials[0]?.id.toString('base64url'),
    name: 'My phone',
    created_at: passkey.created_at,
    last_used_at: null,
    aaguid: '00000000-0000-0000-0000-000000000000',
    transports: ['internal'],
    backup_eligible: true,
    backed_up: true
  })
  t.ok(Math.abs(Date.parse(passkey.created_at) - Date.now()) < 10_000)
  const next = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  t.strictSame(next.options.excludeCredentials, [{ id: passkey.id, transports: ['internal'], type: 'public-key' }])
  t.strictSame(next.options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' })
  t.strictSame(next.options.rp, { name: 'Example Corp', id: 'auth.example.com' })
  const unnamed = await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN, { uv: false }))
  t.equal(unnamed.statusCode, 201, 'UV off is accepted under preferred')
  t.equal((unnamed.json() as { name: string }).name, 'Passkey', 'the default name')
  const audit = (await auditRows(app)).filter((r) => r.event === 'passkey_registered')
  t.strictSame(audit.map((r) => [r.outcome, r.user_id]), [['success', user.id], ['success', user.id]])
})

test('every refused registration is 400 passkey_invalid with one body, and stores nothing', async (t) => {
  const app = await passkeyApp(t)
  const user = await signedInUser(app)
  const cases: Array<[string, Twist]> = [
    ['another origin', { origin: 'https://evil.example.com' }],
    ['crossOrigin: true', { crossOrigin: true }],
    ['a topOrigin', { topOrigin: ORIGIN }],
    ['another RP ID\'s hash', { rpId: 'example.org' }],
    ['UV off under required', { uv: false }],
    ['UP off', { up: false }],
    ['a sign-in type', { type: 'webauthn.get' }],
    ['another challenge', { challenge: Buffer.alloc(32, 1).toString('base64url') }],
    ['an attestation other than none', { fmt: 'packed' }]
  ]
  for (const [what, twist] of cases) {
    const res = await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN), twist)
    t.equal(res.statusCode, 400, what)
    t.strictSame(res.json(), PASSKEY_INVALID, what)
  }
  t.strictSame(await rawSql(app.config, sql`select id from passkeys`), [])
  const refusals = (await auditRows(app)).filter((r) => r.event === 'passkey_registered')
  t.equal(refusals.length, cases.length)
  t.ok(refusals.every((r) => r.outcome === 'failure' && r.user_id === user.id && r.detail?.startsWith('passkey: ')), 'each audited with its reason')
  const authenticator = new SoftAuthenticator(ORIGIN)
  const ok = await registerWith(app, user.access_token, authenticator)
  t.equal(ok.statusCode, 201, 'negative control: the same authenticator untwisted is accepted')
  const other = await signedInUser(app)
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/register/options', {}, other.access_token)
  const again = await post(app, '/auth/passkeys/register/verify', { challenge_id: challengeId, credential: authenticator.create(options, {}, authenticator.credentials[0]) }, other.access_token)
  t.strictSame([again.statusCode, again.json()], [400, PASSKEY_INVALID], 'a credential ID registered already (here by another user)')
})

test('a registration challenge is good once, for 5 minutes, for its own user and ceremony', async (t) => {
  const clock = testClock()
  const app = await passkeyApp(t, {}, { clock: clock.clock })
  const user = await signedInUser(app)
  const other = await signedInUser(app)
  const authenticator = new SoftAuthenticator(ORIGIN)

  const first = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  const credential = authenticator.create(first.options)
  const ok = await post(app, '/auth/passkeys/register/verify', { challenge_id: first.challenge_id, credential }, user.access_token)
  t.equal(ok.statusCode, 201)
  const replay = await post(app, '/auth/passkeys/register/verify', { challenge_id: first.challenge_id, credential: authenticator.create(first.options) }, user.access_token)
  t.strictSame([replay.statusCode, replay.json()], [400, PASSKEY_INVALID], 'a spent challenge')

  const theirs = await ceremony(app, '/auth/passkeys/register/options', {}, other.access_token)
  const stolen = await post(app, '/auth/passkeys/register/verify', { challenge_id: theirs.challenge_id, credential: authenticator.create(theirs.options) }, user.access_token)
  t.strictSame([stolen.statusCode, stolen.json()], [400, PASSKEY_INVALID], 'another user\'s challenge')

  const login = await ceremony(app, '/auth/passkeys/login/options', {})
  const wrongCeremony = await post(app, '/auth/passkeys/register/verify', {
    challenge_id: login.challenge_id, credential: authenticator.create({ ...first.options, challenge: login.options.challenge })
  }, user.access_token)
  t.strictSame([wrongCeremony.statusCode, wrongCeremony.json()], [400, PASSKEY_INVALID], 'a sign-in challenge')

  const late = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  clock.now += 300_000
  const expired = await post(app, '/auth/passkeys/register/verify', { challenge_id: late.challenge_id, credential: authenticator.create(late.options) }, user.access_token)
  t.strictSame([expired.statusCode, expired.json()], [400, PASSKEY_INVALID], 'an expired challenge (5 minutes)')
  // the sign-in is no longer recent: the password again
  const inTime = await ceremony(app, '/auth/passkeys/register/options', { password: user.password }, user.access_token)
  clock.now += 299_000
  const fresh = await post(app, '/auth/passkeys/register/verify', { challenge_id: inTime.challenge_id, credential: authenticator.create(inTime.options) }, user.access_token)
  t.equal(fresh.statusCode, 201, 'negative control: within 5 minutes')
})

test('recent authentication: past REAUTH_MAX_AGE, 403 reauth_required unless the body has the password; a wrong one 400 invalid_password', async (t) => {
  const clock = testClock()
  const app = await passkeyApp(t, { REAUTH_MAX_AGE: '5m' }, { clock: clock.clock })
  const user = await signedInUser(app)
  const signedInAt = claimsOf(user.access_token).auth_time * 1000
  clock.now = signedInAt + 300_000
  t.equal((await post(app, '/auth/passkeys/register/options', {}, user.access_token)).statusCode, 200, 'within REAUTH_MAX_AGE')
  clock.now = signedInAt + 301_000
  const stale = await post(app, '/auth/passkeys/register/options', {}, user.access_token)
  t.equal(stale.statusCode, 403)
  t.strictSame(stale.json(), REAUTH_REQUIRED)
  const wrong = await post(app, '/auth/passkeys/register/options', { password: 'Not-The-Password-1' }, user.access_token)
  t.equal(wrong.statusCode, 400)
  t.strictSame(wrong.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  const withPassword = await post(app, '/auth/passkeys/register/options', { password: user.password }, user.access_token)
  t.equal(withPassword.statusCode, 200, 'the password again')
  const none = await post(app, '/auth/passkeys/register/options', {})
  t.equal(none.statusCode, 401, 'no token')
})

test('PASSKEYS_MAX_PER_USER: beyond it 409 too_many_passkeys, at the options and at the verify', async (t) => {
  const app = await passkeyApp(t, { PASSKEYS_MAX_PER_USER: 2 })
  const user = await signedInUser(app)
  const pending = await ceremony(app, '/auth/passkeys/register/options', {}, user.access_token)
  for (let i = 0; i < 2; i++) t.equal((await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN))).statusCode, 201)
  const tooMany = { error: 'Conflict', message: 'The account has as many passkeys as it may have', code: 'too_many_passkeys' }
  const options = await post(app, '/auth/passkeys/register/options', {}, user.access_token)
  t.strictSame([options.statusCode, options.json()], [409, tooMany])
  const late = await post(app, '/auth/passkeys/register/verify', { challenge_id: pending.challenge_id, credential: new SoftAuthenticator(ORIGIN).create(pending.options) }, user.access_token)
  t.strictSame([late.statusCode, late.json()], [409, tooMany], 'options fetched before the others were added')
  t.equal((await rawSql(app.config, sql`select id from passkeys`)).length, 2)
})

test('adding a passkey queues a notice mail', async (t) => {
  const app = await recoveryApp(t, PASSKEYS_ON)
  const user = await signedInUser(app)
  const before = (await queued(app, user.email)).length
  t.equal((await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN), {}, { name: 'Laptop' })).statusCode, 201)
  t.equal((await queued(app, user.email)).length, before + 1)
  const mail = await latestMail(app, user.email)
  t.equal(mail.subject, 'Security notice for your gatehouse account')
  t.match(mail.text, /A passkey \("Laptop"\) was added to your account\./)
})
