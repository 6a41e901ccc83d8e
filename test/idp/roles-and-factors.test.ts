import t from 'tap'
import { createUser, login, setCookies } from '../helper.js'
import { enrolledUser, oathtool, testClock, TOTP_ON } from '../routes/auth/two-factor/support.js'
import { ceremony, registerWith } from '../routes/passkeys/support.js'
import { SoftAuthenticator } from '../webauthn-authenticator.js'
import { accessClaims, auditOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, PORTAL_ORIGIN, redirectUri, shiftDateNow } from './support.js'
import { startUpstream, stopUpstream } from './upstream.js'

/*
 * What a sign-in through a provider grants (src/idp/idp-accounts.ts, src/idp/identity.ts): the
 * roles role_mapping governs, set at each sign-in (a removal ends the sessions); the strength of
 * the session, TOTP still asked unless the provider is trusted for it and says it asked; and the
 * pending link completed by a sign-in that needs its second step, or by a passkey.
 */

const IDS = ['corp', 'trusted', 'super'] as const
const upstream = await startUpstream(IDS.map((id) => ({ client_id: id, client_secret: CLIENT_SECRET, redirect_uris: [redirectUri(id)] })))
t.teardown(async () => { await stopUpstream(upstream) })

const clock = testClock()
const MAPPING = { claim: 'groups', values: { admins: ['admin'], staff: ['staff', 'reader'] } }
const built = await idpApp(t, [
  { id: 'corp', client_id: 'corp', type: 'oidc', display_name: 'Corp SSO', issuer: upstream.issuer, allow_signup: true, scopes: 'openid email profile groups', role_mapping: MAPPING },
  { id: 'trusted', client_id: 'trusted', type: 'oidc', display_name: 'Trusted SSO', issuer: upstream.issuer, satisfies_mfa: true },
  // a mapping pointed at the claim an upstream might use to make someone a superuser
  { id: 'super', client_id: 'super', type: 'oidc', display_name: 'Super SSO', issuer: upstream.issuer, allow_signup: true, role_mapping: { claim: 'is_superuser', values: { true: ['admin'] } } }
], { ...TOTP_ON, ENABLE_PASSKEYS: true, WEBAUTHN_RP_ID: 'gh.localhost' }, { clock: clock.clock })
const app = Object.assign(built, { testClock: clock })
const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`

/** whether a refresh token still works (its session not revoked) */
async function live (refreshToken: string): Promise<boolean> {
  return (await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } })).statusCode === 200
}

t.test('role_mapping: the roles it governs set to what the claim maps to at each sign-in; a removal ends the sessions', async (t) => {
  upstream.script({ sub: 'r-1', email: 'roles@example.com', email_verified: true, groups: ['staff'] })
  const first = await new IdpBrowser(app).signIn('corp')
  t.match(accessClaims(first.callback), { roles: ['user', 'staff', 'reader'] }, 'DEFAULT_ROLES and the mapped roles at sign-up')
  const user = await app.store.users.findByEmail('roles@example.com')
  const id = user?.id ?? ''
  // a role the mapping does not govern, given by an admin, is kept through every sign-in
  await app.services.users.update(id, { roles: ['user', 'staff', 'reader', 'billing'] }, { is_superuser: true }, { ip: '127.0.0.1' })
  const before = first.callback.cookies.find((c) => c.name === '__Host-refresh_token')?.value ?? ''
  t.ok(await live(before))

  const same = await new IdpBrowser(app).signIn('corp')
  t.match(accessClaims(same.callback), { roles: ['user', 'staff', 'reader', 'billing'] })
  const kept = same.callback.cookies.find((c) => c.name === '__Host-refresh_token')?.value ?? ''
  t.ok(await live(kept), 'the same groups: nothing revoked (the negative control)')

  upstream.script({ sub: 'r-1', email: 'roles@example.com', email_verified: true, groups: ['admins', 'unmapped'] })
  const promoted = await new IdpBrowser(app).signIn('corp')
  t.equal(promoted.callback.statusCode, 303)
  t.match(accessClaims(promoted.callback), { roles: ['user', 'billing', 'admin'], is_superuser: false })
  t.notOk(await live(kept), 'staff and reader taken away: the earlier sessions are revoked')
  const current = promoted.callback.cookies.find((c) => c.name === '__Host-refresh_token')?.value ?? ''
  t.ok(await live(current), 'the new sign-in\'s session carries the new roles and lives')

  upstream.script({ sub: 'r-1', email: 'roles@example.com', email_verified: true })
  const none = await new IdpBrowser(app).signIn('corp')
  t.match(accessClaims(none.callback), { roles: ['user', 'billing'] }, 'no claim: every governed role goes')
  t.strictSame((await auditOf(app, 'grants_changed')).filter((r) => r.userId === id).map((r) => r.detail), [
    'roles: [user,staff,reader] -> [user,staff,reader,billing]',
    'roles: [user,staff,reader,billing] -> [user,billing,admin]',
    'roles: [user,billing,admin] -> [user,billing]'
  ])
  t.strictSame((await auditOf(app, 'sessions_revoked')).filter((r) => r.userId === id).map((r) => r.detail), ['grant_removed: 2', 'grant_removed: 1'])
})

/** Links (provider, sub) to the user, as the account page's link does. */
async function linkIdentity (userId: string, provider: string, sub: string): Promise<void> {
  await app.store.identities.insert({ id: crypto.randomUUID(), userId, provider, subject: sub, email: null, createdAt: new Date().toISOString(), lastLoginAt: null })
}

t.test('is_superuser never comes from upstream: not at sign-up, not for a linked user, not through a role_mapping pointed at it', async (t) => {
  upstream.script({ sub: 'su-1', email: 'claims-super@example.com', email_verified: true, is_superuser: true })
  const signUp = await new IdpBrowser(app).signIn('super', '?rd=/portal/account')
  t.equal(signUp.callback.statusCode, 303)
  t.equal(signUp.callback.headers.location, ACCOUNT)
  const created = await app.store.users.findByEmail('claims-super@example.com')
  t.match(created, { isSuperuser: false, roles: ['user'] }, 'a boolean maps to nothing: the mapping reads strings')
  t.match(accessClaims(signUp.callback), { user_id: created?.id, roles: ['user'], is_superuser: false })

  const local = await createUser(app)
  await linkIdentity(local.id, 'super', 'su-2')
  upstream.script({ sub: 'su-2', is_superuser: 'true' })
  const linked = await new IdpBrowser(app).signIn('super', '?rd=/portal/account')
  t.equal(linked.callback.statusCode, 303)
  t.match(accessClaims(linked.callback), { user_id: local.id, roles: ['user', 'admin'], is_superuser: false }, 'the mapping grants its role, never the flag')
  t.match(await app.store.users.findById(local.id), { isSuperuser: false, roles: ['user', 'admin'] })
})

t.test('a linked local superuser keeps the flag through a sign-in whose mapping takes a role away', async (t) => {
  const local = await createUser(app, { roles: ['user', 'admin'], isSuperuser: true })
  await linkIdentity(local.id, 'super', 'su-3')
  upstream.script({ sub: 'su-3', is_superuser: false })
  const { callback } = await new IdpBrowser(app).signIn('super', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, ACCOUNT)
  t.match(accessClaims(callback), { user_id: local.id, roles: ['user'], is_superuser: true })
  t.match(await app.store.users.findById(local.id), { isSuperuser: true, roles: ['user'] })
  t.strictSame((await auditOf(app, 'grants_changed')).filter((r) => r.userId === local.id).map((r) => r.detail), ['roles: [user,admin] -> [user]'])
})

/** A TOTP user with an identity at `provider` linked (through the account page's link). */
async function totpUserLinked (provider: string, sub: string): Promise<Awaited<ReturnType<typeof enrolledUser>>> {
  const user = await enrolledUser(app)
  await linkIdentity(user.id, provider, sub)
  return user
}

t.test('a TOTP user signing in through a provider gets the portal\'s TOTP step; then aal2 ["ext","otp","mfa"], naming the provider', async (t) => {
  const user = await totpUserLinked('corp', 'totp-1')
  upstream.script({ sub: 'totp-1', amr: ['pwd', 'mfa'] })
  const browser = new IdpBrowser(app)
  const { callback } = await browser.signIn('corp', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/2fa`, 'satisfies_mfa is off: the upstream mfa counts for nothing')
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', '__Host-gh_flow=…'], 'no session before the code')
  t.equal((await browser.get('/portal/2fa')).statusCode, 200)
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, ACCOUNT)
  t.match(accessClaims(done), { user_id: user.id, aal: 'aal2', amr: ['ext', 'otp', 'mfa'], idp: 'corp' })
  t.match((await auditOf(app, 'mfa_challenge_issued')).at(-1), { userId: user.id, detail: 'ext' })
  t.match((await auditOf(app, 'login_succeeded')).at(-1), { userId: user.id, detail: 'idp:corp' })
  app.testClock.now += 30_000
})

t.test('satisfies_mfa and an upstream amr with mfa: aal2 ["ext","mfa"] at once; without mfa in amr, the TOTP step', async (t) => {
  const user = await totpUserLinked('trusted', 'totp-2')
  upstream.script({ sub: 'totp-2', amr: ['pwd', 'otp', 'mfa'] })
  const trusted = await new IdpBrowser(app).signIn('trusted', '?rd=/portal/account')
  t.equal(trusted.callback.statusCode, 303)
  t.equal(trusted.callback.headers.location, ACCOUNT)
  t.match(accessClaims(trusted.callback), { user_id: user.id, aal: 'aal2', amr: ['ext', 'mfa'], idp: 'trusted' })
  upstream.script({ sub: 'totp-2', amr: ['pwd'] })
  const weaker = await new IdpBrowser(app).signIn('trusted')
  t.equal(weaker.callback.headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  upstream.script({ sub: 'plain-1', email: 'plain@example.com', email_verified: true, amr: ['pwd', 'mfa'] })
  await linkIdentity((await createUser(app)).id, 'trusted', 'plain-1')
  t.match(accessClaims((await new IdpBrowser(app).signIn('trusted')).callback), { aal: 'aal2', amr: ['ext', 'mfa'] }, 'with or without TOTP')
})

t.test('a pending link completes after the password and the TOTP step in that browser', async (t) => {
  const user = await enrolledUser(app, { email: 'pending-totp@example.com' })
  upstream.script({ sub: 'pend-1', email: user.email, email_verified: true })
  const browser = new IdpBrowser(app)
  t.equal((await browser.signIn('corp')).callback.statusCode, 200)
  const password = await browser.post('/portal/login', { email: user.email, password: user.password })
  t.equal(password.headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  t.equal(await app.store.identities.findBySubject('corp', 'pend-1'), undefined, 'not before the second step')
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 303)
  t.match(await app.store.identities.findBySubject('corp', 'pend-1'), { userId: user.id })
  t.match((await auditOf(app, 'idp_linked')).at(-1), { userId: user.id, detail: 'idp:corp' })
  app.testClock.now += 30_000
})

t.test('a pending link carried into the TOTP step still ends at its own ten minutes: the code after them signs in and links nothing', async (t) => {
  const user = await enrolledUser(app, { email: 'late-totp@example.com' })
  upstream.script({ sub: 'pend-3', email: user.email, email_verified: true })
  const browser = new IdpBrowser(app)
  t.equal((await browser.signIn('corp')).callback.statusCode, 200)
  const shift = shiftDateNow(t)
  shift(540_000)
  const password = await browser.post('/portal/login', { email: user.email, password: user.password })
  t.equal(password.headers.location, `${PORTAL_ORIGIN}/portal/2fa`, 'nine minutes on, the password')
  t.match(setCookies(password).find((c) => c.name === '__Host-gh_flow')?.attributes, { 'max-age': '300' }, 'the step sealed for five minutes more, past the link\'s ten')
  shift(605_000)
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  shift(0)
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, ACCOUNT)
  t.match(accessClaims(done), { user_id: user.id, aal: 'aal2' }, 'the sign-in itself succeeds')
  t.equal(await app.store.identities.findBySubject('corp', 'pend-3'), undefined, 'the link does not')
  t.strictSame((await auditOf(app, 'idp_linked')).filter((r) => r.userId === user.id), [])
  app.testClock.now += 30_000
})

t.test('a pending link completes after a passkey sign-in on the sign-in page', async (t) => {
  const user = await createUser(app, { email: 'pending-passkey@example.com' })
  const authenticator = new SoftAuthenticator(PORTAL_ORIGIN)
  t.equal((await registerWith(app, (await login(app, user)).access_token, authenticator)).statusCode, 201)
  upstream.script({ sub: 'pend-2', email: user.email, email_verified: true })
  const browser = new IdpBrowser(app)
  t.equal((await browser.signIn('corp')).callback.statusCode, 200)
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  const res = await browser.post('/portal/passkey', { challenge_id: challengeId, credential: JSON.stringify(authenticator.get(options)) })
  t.equal(res.statusCode, 303)
  t.match(await app.store.identities.findBySubject('corp', 'pend-2'), { userId: user.id })
  t.match((await auditOf(app, 'idp_linked')).at(-1), { userId: user.id, detail: 'idp:corp' })
})
