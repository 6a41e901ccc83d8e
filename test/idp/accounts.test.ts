import t from 'tap'
import { createUser } from '../helper.js'
import { accessClaims, answerOf, auditOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, PORTAL_ORIGIN, redirectUri, refusal } from './support.js'
import { startUpstream, stopUpstream } from './upstream.js'

/*
 * The decision table's rows without an email match (src/idp/decision.ts, src/idp/idp-accounts.ts):
 * a linked identity signs its user in, a new verified email signs up where allow_signup says so,
 * anything else is signup_disabled; and allowed_domains at every sign-in.
 */

const IDS = ['open', 'closed', 'domain'] as const
const upstream = await startUpstream(IDS.map((id) => ({ client_id: id, client_secret: CLIENT_SECRET, redirect_uris: [redirectUri(id)] })))
t.teardown(async () => { await stopUpstream(upstream) })

// ENABLE_REGISTER stays off: allow_signup is set per provider, `closed` takes the default (off)
const app = await idpApp(t, [
  { id: 'open', client_id: 'open', type: 'oidc', display_name: 'Open SSO', issuer: upstream.issuer, allow_signup: true },
  // a display name with markup in it: every page escapes it
  { id: 'closed', client_id: 'closed', type: 'oidc', display_name: 'Closed <b>SSO</b> & "co"', issuer: upstream.issuer },
  { id: 'domain', client_id: 'domain', type: 'oidc', display_name: 'Domain SSO', issuer: upstream.issuer, allow_signup: true, allowed_domains: ['corp.example'] }
], { DEFAULT_ROLES: 'user,reader' })

const SIGNUP_DISABLED = (name: string) => refusal(403, 'signup_disabled', 'Sign-in refused', `No account exists for this ${name} identity, and none can be created through it.`)
const DOMAIN_REFUSED = refusal(403, 'domain_not_allowed', 'Sign-in refused', 'Accounts of this email domain may not sign in here.')

t.test('no local user with a verified email, allow_signup: an account made (that email verified, the upstream name, no password), linked, signed in', async (t) => {
  upstream.script({ sub: 'new-1', email: 'New.Person@Example.com', email_verified: true, name: 'New Person' })
  const { callback } = await new IdpBrowser(app).signIn('open', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', 'access_token=…', '__Host-refresh_token=…', '__Host-gh_flow='])
  const user = await app.store.users.findByEmail('new.person@example.com')
  t.match(user, { email: 'new.person@example.com', name: 'New Person', passwordHash: '', roles: ['user', 'reader'], isSuperuser: false, emailVerified: true })
  t.match(accessClaims(callback), { user_id: user?.id, email: 'new.person@example.com', roles: ['user', 'reader'], aal: 'aal1', amr: ['ext'], idp: 'open' })
  t.match(await app.store.identities.findBySubject('open', 'new-1'), { userId: user?.id, email: 'new.person@example.com' })
  t.strictSame(await auditOf(app, 'registered'), [{ event: 'registered', outcome: 'success', userId: user?.id, email: 'new.person@example.com', detail: 'idp:open' }])
  const password = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'new.person@example.com', password: '' } })
  t.equal(password.statusCode, 422, 'no password to sign in with (an empty one is not even asked)')
  const guess = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'new.person@example.com', password: 'anything-at-all' } })
  t.equal(guess.statusCode, 401)
})

t.test('without an upstream name, the email\'s local part names the account', async (t) => {
  upstream.script({ sub: 'new-2', email: 'jo.doe@example.com', email_verified: true })
  t.equal((await new IdpBrowser(app).signIn('open')).callback.statusCode, 303)
  t.match(await app.store.users.findByEmail('jo.doe@example.com'), { name: 'jo.doe' })
})

t.test('a linked identity signs its user in, even after the upstream email changed; the identity keeps the new email', async (t) => {
  upstream.script({ sub: 'new-1', email: 'renamed@elsewhere.example', email_verified: false, name: 'Renamed' })
  const { callback } = await new IdpBrowser(app).signIn('open')
  const user = await app.store.users.findByEmail('new.person@example.com')
  t.equal(callback.statusCode, 303)
  t.match(accessClaims(callback), { user_id: user?.id, email: 'new.person@example.com', idp: 'open' })
  t.match(await app.store.identities.findBySubject('open', 'new-1'), { userId: user?.id, email: 'renamed@elsewhere.example', lastLoginAt: String })
  t.strictSame((await auditOf(app, 'login_succeeded')).map((r) => [r.userId, r.detail]), [[user?.id, 'idp:open']])
})

t.test('a linked identity whose upstream email is now another local account\'s (verified at both ends) still signs in the linked user', async (t) => {
  const other = await createUser(app, { email: 'taken.over@example.com' })
  await app.store.users.markEmailVerified(other.id, new Date().toISOString())
  upstream.script({ sub: 'new-1', email: 'Taken.Over@example.com', email_verified: true })
  const { callback } = await new IdpBrowser(app).signIn('open', '?rd=/portal/account')
  const user = await app.store.users.findByEmail('new.person@example.com')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.match(accessClaims(callback), { user_id: user?.id, email: 'new.person@example.com', idp: 'open' })
  t.match(await app.store.identities.findBySubject('open', 'new-1'), { userId: user?.id, email: 'taken.over@example.com' })
  t.strictSame(await app.store.identities.listOf(other.id), [], 'nothing linked to the other account')
})

t.test('no local user and no sign-up: 403 signup_disabled (audited idp_link_refused), for every reason', async (t) => {
  const cases: Array<[string, string, Parameters<typeof upstream.script>[0]]> = [
    ['allow_signup off (ENABLE_REGISTER\'s default)', 'closed', { sub: 'c-1', email: 'closed@example.com', email_verified: true }],
    ['an unverified email', 'open', { sub: 'c-2', email: 'unverified@example.com', email_verified: false }],
    ['email_verified the string "true", not true', 'open', { sub: 'c-4', email: 'stringly@example.com', email_verified: 'true' }],
    ['no email at all', 'open', { sub: 'c-3' }]
  ]
  for (const [label, provider, script] of cases) {
    upstream.script(script)
    const { callback } = await new IdpBrowser(app).signIn(provider)
    t.strictSame(answerOf(callback), SIGNUP_DISABLED(provider === 'open' ? 'Open SSO' : 'Closed <b>SSO</b> & "co"'), label)
    if (provider === 'closed') {
      t.match(callback.body, 'this Closed &lt;b&gt;SSO&lt;/b&gt; &amp; &quot;co&quot; identity', 'escaped')
      t.notMatch(callback.body, '<b>SSO</b>')
    }
    t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', '__Host-gh_csrf=…'], `${label}: no session`)
  }
  t.equal(await app.store.users.findByEmail('closed@example.com'), undefined)
  t.equal(await app.store.users.findByEmail('unverified@example.com'), undefined)
  t.equal(await app.store.users.findByEmail('stringly@example.com'), undefined)
  t.strictSame((await auditOf(app, 'idp_link_refused')).map((r) => [r.email, r.detail, r.outcome]), [
    ['closed@example.com', 'idp:closed signup_disabled', 'failure'],
    ['unverified@example.com', 'idp:open signup_disabled', 'failure'],
    ['stringly@example.com', 'idp:open signup_disabled', 'failure'],
    [null, 'idp:open signup_disabled', 'failure']
  ])
})

t.test('allowed_domains: a verified email in it signs up; another domain, an unverified one or none is 403 domain_not_allowed', async (t) => {
  upstream.script({ sub: 'd-1', email: 'ann@corp.example', email_verified: true })
  const first = await new IdpBrowser(app).signIn('domain')
  t.equal(first.callback.statusCode, 303, 'the negative control: the domain it allows')
  for (const [label, script] of [
    ['another domain', { sub: 'd-2', email: 'ann@corp.example.evil', email_verified: true }],
    ['a subdomain', { sub: 'd-3', email: 'ann@sub.corp.example', email_verified: true }],
    ['unverified', { sub: 'd-4', email: 'bob@corp.example', email_verified: false }],
    ['no email', { sub: 'd-5' }]
  ] as const) {
    upstream.script(script)
    const { callback } = await new IdpBrowser(app).signIn('domain')
    t.strictSame(answerOf(callback), DOMAIN_REFUSED, label)
  }
  t.strictSame((await auditOf(app, 'login_failed')).filter((r) => r.detail !== null).map((r) => [r.email, r.detail]), [
    ['ann@corp.example.evil', 'idp:domain domain_not_allowed'],
    ['ann@sub.corp.example', 'idp:domain domain_not_allowed'],
    ['bob@corp.example', 'idp:domain domain_not_allowed'],
    [null, 'idp:domain domain_not_allowed']
  ])
})

t.test('allowed_domains holds at every sign-in: a linked identity whose email left the domain is refused', async (t) => {
  upstream.script({ sub: 'd-1', email: 'ann@elsewhere.example', email_verified: true })
  const { callback } = await new IdpBrowser(app).signIn('domain')
  t.strictSame(answerOf(callback), DOMAIN_REFUSED)
  upstream.script({ sub: 'd-1', email: 'ann@corp.example', email_verified: true })
  t.equal((await new IdpBrowser(app).signIn('domain')).callback.statusCode, 303, 'back in the domain, back in')
})

t.test('a service account\'s email never matches', async (t) => {
  const local = await createUser(app, { email: 'svc@example.com' })
  await app.store.users.markEmailVerified(local.id, new Date().toISOString())
  // what a service account looks like to the decision: a user of kind service (made here through the repository)
  await app.store.transaction(async (tx) => { await tx.users.delete(local.id) })
  const now = new Date().toISOString()
  await app.store.users.insertMany([{ id: local.id, email: 'svc@example.com', name: 'svc', age: null, passwordHash: '', roles: [], isSuperuser: false, kind: 'service', emailVerified: true, createdAt: now }], now)
  upstream.script({ sub: 'svc-1', email: 'svc@example.com', email_verified: true })
  const { callback } = await new IdpBrowser(app).signIn('open')
  t.strictSame(answerOf(callback), refusal(403, 'link_refused', 'Sign-in refused', 'An account with this email exists; Open SSO cannot be connected to it.'))
})
