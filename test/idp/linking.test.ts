import t from 'tap'
import { createUser, setCookies } from '../helper.js'
import { accessClaims, answerOf, auditOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, pageText, PORTAL_ORIGIN, redirectUri, refusal, shiftDateNow } from './support.js'
import { startUpstream, stopUpstream } from './upstream.js'

/*
 * The decision table's rows that meet an existing account (src/idp/decision.ts, src/idp/idp-accounts.ts):
 * a link from the account page (intent=link), an email match under each link_policy, an unverified
 * upstream email, and the pending link a local sign-in completes.
 */

const IDS = ['after', 'auto', 'autoany', 'never'] as const
const upstream = await startUpstream(IDS.map((id) => ({ client_id: id, client_secret: CLIENT_SECRET, redirect_uris: [redirectUri(id)] })))
t.teardown(async () => { await stopUpstream(upstream) })

const clock = { now: Date.now() }
const app = await idpApp(t, [
  { id: 'after', client_id: 'after', type: 'oidc', display_name: 'After SSO', issuer: upstream.issuer },
  { id: 'auto', client_id: 'auto', type: 'oidc', display_name: 'Auto SSO', issuer: upstream.issuer, link_policy: 'auto_verified', allowed_domains: ['example.com'] },
  { id: 'autoany', client_id: 'autoany', type: 'oidc', display_name: 'Auto Any', issuer: upstream.issuer, link_policy: 'auto_verified' },
  { id: 'never', client_id: 'never', type: 'oidc', display_name: 'Never SSO', issuer: upstream.issuer, link_policy: 'never' }
], { REAUTH_MAX_AGE: '5m' }, { clock: () => clock.now })

let n = 0
/** a local account, and the upstream account (another subject each time) that signs in next with its email */
async function matching (options: { verifiedLocally?: boolean, verifiedUpstream?: boolean } = {}): Promise<{ id: string, email: string, password: string, sub: string }> {
  const user = await createUser(app, { email: `local${++n}@example.com` })
  if (options.verifiedLocally === true) await app.store.users.markEmailVerified(user.id, new Date().toISOString())
  const sub = `upstream-${n}`
  upstream.script({ sub, email: user.email.toUpperCase(), email_verified: options.verifiedUpstream ?? true, name: 'Someone' })
  return { ...user, sub }
}

async function signedIn (user: { email: string, password: string }): Promise<IdpBrowser> {
  const browser = new IdpBrowser(app)
  const res = await browser.post('/portal/login', { email: user.email, password: user.password, rd: '/portal/account' })
  if (res.statusCode !== 303) throw new Error(`portal sign-in: ${res.statusCode}`)
  return browser
}

const identityOf = async (provider: string, sub: string) => await app.store.identities.findBySubject(provider, sub)

t.test('verified email = a local user\'s, after_login: no link, no session, a page; the local sign-in in that browser completes the link', async (t) => {
  const user = await matching()
  const browser = new IdpBrowser(app)
  const { callback } = await browser.signIn('after', '?rd=/portal/account')
  t.equal(callback.statusCode, 200)
  t.strictSame(pageText(callback.body), {
    heading: 'Connect After SSO',
    code: undefined,
    alert: undefined,
    notice: 'An account with this email exists — sign in to connect After SSO.',
    links: [{ href: `${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(`${PORTAL_ORIGIN}/portal/account`)}&login_hint=${encodeURIComponent(user.email)}`, text: 'Sign in' }]
  })
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', '__Host-gh_flow=…', '__Host-gh_csrf=…'], 'the pending link in the flow cookie, no session')
  t.equal(await identityOf('after', user.sub), undefined, 'nothing linked yet')

  const wrong = await browser.post('/portal/login', { email: user.email, password: 'not-the-password', rd: '/portal/account' })
  t.equal(wrong.statusCode, 401, 'a failed sign-in completes nothing')
  t.equal(await identityOf('after', user.sub), undefined)
  const local = await browser.post('/portal/login', { email: user.email, password: user.password, rd: '/portal/account' })
  t.equal(local.statusCode, 303)
  t.equal(local.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.match(await identityOf('after', user.sub), { userId: user.id, email: user.email, lastLoginAt: null })
  t.strictSame(await auditOf(app, 'idp_linked'), [{ event: 'idp_linked', outcome: 'success', userId: user.id, email: user.email, detail: 'idp:after' }])

  const again = await new IdpBrowser(app).signIn('after')
  t.equal(again.callback.statusCode, 303, 'from then on the provider signs that user in')
  t.match(accessClaims(again.callback), { user_id: user.id, amr: ['ext'], idp: 'after' })
})

t.test('a pending link is for the account it matched: another account\'s sign-in in that browser completes nothing', async (t) => {
  const user = await matching()
  const someoneElse = await createUser(app)
  const browser = new IdpBrowser(app)
  t.equal((await browser.signIn('after')).callback.statusCode, 200)
  t.equal((await browser.post('/portal/login', { email: someoneElse.email, password: someoneElse.password })).statusCode, 303)
  t.equal(await identityOf('after', user.sub), undefined)
  t.equal((await browser.post('/portal/login', { email: user.email, password: user.password })).statusCode, 303)
  t.equal(await identityOf('after', user.sub), undefined, 'the sign-in before consumed the flow cookie')
})

t.test('auto_verified with allowed_domains containing the domain and the local email verified: linked and signed in', async (t) => {
  const user = await matching({ verifiedLocally: true })
  const { callback } = await new IdpBrowser(app).signIn('auto', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.match(accessClaims(callback), { user_id: user.id, amr: ['ext'], idp: 'auto' })
  t.match(await identityOf('auto', user.sub), { userId: user.id, email: user.email })
  t.strictSame((await auditOf(app, 'idp_auto_linked')).filter((r) => r.userId === user.id), [{ event: 'idp_auto_linked', outcome: 'success', userId: user.id, email: user.email, detail: 'idp:auto' }])
})

t.test('auto_verified whose conditions fail (local email unverified; no allowed_domains): the pending link, as after_login', async (t) => {
  for (const [provider, verifiedLocally] of [['auto', false], ['autoany', true]] as const) {
    const user = await matching({ verifiedLocally })
    const { callback } = await new IdpBrowser(app).signIn(provider)
    t.equal(callback.statusCode, 200, provider)
    t.equal(pageText(callback.body).heading, provider === 'auto' ? 'Connect Auto SSO' : 'Connect Auto Any')
    t.equal(accessClaims(callback), undefined, 'no session')
    t.equal(await identityOf(provider, user.sub), undefined, 'no link')
  }
})

t.test('link_policy never: 403 link_refused, audited', async (t) => {
  const user = await matching({ verifiedLocally: true })
  const { callback } = await new IdpBrowser(app).signIn('never')
  t.strictSame(answerOf(callback), refusal(403, 'link_refused', 'Sign-in refused', 'An account with this email exists; Never SSO cannot be connected to it.'))
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', '__Host-gh_csrf=…'])
  t.strictSame((await auditOf(app, 'idp_link_refused')).filter((r) => r.userId === user.id), [{ event: 'idp_link_refused', outcome: 'failure', userId: user.id, email: user.email, detail: 'idp:never link_refused' }])
})

t.test('an unverified upstream email matching a local user: 403 link_refused, never a pending link', async (t) => {
  for (const provider of ['after', 'auto']) {
    const user = await matching({ verifiedLocally: true, verifiedUpstream: false })
    const name = provider === 'after' ? 'After SSO' : 'Auto SSO'
    const { callback } = await new IdpBrowser(app).signIn(provider)
    t.strictSame(answerOf(callback), provider === 'auto'
      // allowed_domains takes only a verified address
      ? refusal(403, 'domain_not_allowed', 'Sign-in refused', 'Accounts of this email domain may not sign in here.')
      : refusal(403, 'link_refused', 'Sign-in refused', `An account with this email exists. Sign in, then connect ${name} from your account.`))
    t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', '__Host-gh_csrf=…'], 'no flow cookie: no pending link')
    t.equal(await identityOf(provider, user.sub), undefined)
    const [event, reason] = provider === 'auto' ? ['login_failed', 'domain_not_allowed'] : ['idp_link_refused', 'link_refused']
    t.strictSame((await auditOf(app, event)).filter((r) => r.userId === user.id), [{ event, outcome: 'failure', userId: user.id, email: user.email, detail: `idp:${provider} ${reason}` }], `${provider}: audited`)
  }
})

t.test('intent=link from a recently signed-in portal session: linked (idp_linked), 303 to the return URL', async (t) => {
  const user = await createUser(app, { email: 'linker@example.com' })
  const browser = await signedIn(user)
  upstream.script({ sub: 'link-me', email: 'elsewhere@other.example', email_verified: false })
  const { callback } = await browser.signIn('after', '?intent=link&rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp='], 'the session is the same: no new cookies')
  t.match(await identityOf('after', 'link-me'), { userId: user.id, email: 'elsewhere@other.example' })
  t.strictSame((await auditOf(app, 'idp_linked')).filter((r) => r.userId === user.id), [{ event: 'idp_linked', outcome: 'success', userId: user.id, email: 'elsewhere@other.example', detail: 'idp:after' }])
  const twice = await browser.signIn('after', '?intent=link&rd=/portal/account')
  t.equal(twice.callback.statusCode, 303, 'linking it again to the same account is no error')

  const other = await signedIn(await createUser(app))
  const taken = await other.signIn('after', '?intent=link&rd=/portal/account')
  t.strictSame(answerOf(taken.callback), refusal(409, 'identity_in_use', 'Already connected', 'This After SSO identity is connected to another account.'))
  t.match(await identityOf('after', 'link-me'), { userId: user.id }, 'still the first account\'s')
  t.strictSame((await auditOf(app, 'idp_link_refused')).filter((r) => r.detail === 'idp:after identity_in_use'), [
    { event: 'idp_link_refused', outcome: 'failure', userId: null, email: 'elsewhere@other.example', detail: 'idp:after identity_in_use' }
  ])
})

t.test('intent=link comes before an email match: a verified upstream email of another account, which auto_verified would link, links to the cookie\'s user', async (t) => {
  const owner = await createUser(app, { email: 'owner@example.com' })
  await app.store.users.markEmailVerified(owner.id, new Date().toISOString())
  const user = await createUser(app)
  const browser = await signedIn(user)
  upstream.script({ sub: 'owner-upstream', email: owner.email, email_verified: true })
  const { callback } = await browser.signIn('auto', '?intent=link&rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp='])
  t.match(await identityOf('auto', 'owner-upstream'), { userId: user.id, email: owner.email })
  t.strictSame((await auditOf(app, 'idp_linked')).filter((r) => r.userId === user.id), [{ event: 'idp_linked', outcome: 'success', userId: user.id, email: owner.email, detail: 'idp:auto' }])
  t.strictSame((await auditOf(app, 'idp_auto_linked')).filter((r) => r.userId === owner.id), [], 'nothing for the email\'s owner')
})

t.test('intent=link without a portal session, or without a recent sign-in: the sign-in page with prompt=login, back to this start', async (t) => {
  const start = '/auth/idp/after/start?intent=link&rd=/portal/account'
  const login = `${PORTAL_ORIGIN}/portal/login?prompt=login&rd=${encodeURIComponent(`${PORTAL_ORIGIN}${start}`)}`
  const anonymous = await new IdpBrowser(app).get(start)
  t.equal(anonymous.statusCode, 303)
  t.equal(anonymous.headers.location, login)
  t.strictSame(cookiesSet(anonymous), [], 'no state cookie')

  const browser = await signedIn(await createUser(app))
  clock.now += 6 * 60 * 1000
  t.teardown(() => { clock.now = Date.now() })
  const stale = await browser.get(start)
  t.equal(stale.statusCode, 303)
  t.equal(stale.headers.location, login)
  clock.now = Date.now()
  t.equal((await browser.get(start)).statusCode, 302, 'the negative control: recent enough, the provider')
})

t.test('a link started by one user does not complete for another signed in meanwhile in that browser: 400 idp_invalid', async (t) => {
  const first = await createUser(app)
  const browser = await signedIn(first)
  upstream.script({ sub: 'switch-me', email: 'switch@example.com', email_verified: true })
  const start = await browser.get('/auth/idp/after/start?intent=link')
  const url = await browser.throughUpstream(String(start.headers.location))
  const second = await createUser(app)
  t.equal((await browser.post('/portal/login', { email: second.email, password: second.password })).statusCode, 303)
  const res = await browser.get(`${url.pathname}${url.search}`)
  t.strictSame(answerOf(res), refusal(400, 'idp_invalid', 'Sign-in failed', 'The answer from After SSO could not be verified. Start the sign-in again.'))
  t.equal(await identityOf('after', 'switch-me'), undefined)
})

t.test('a pending link whose identity was linked meanwhile completes nothing, and the sign-in still succeeds', async (t) => {
  for (const owner of ['another account', 'the same account'] as const) {
    const user = await matching()
    const browser = new IdpBrowser(app)
    t.equal((await browser.signIn('after')).callback.statusCode, 200)
    const ownerId = owner === 'the same account' ? user.id : (await createUser(app)).id
    await app.store.identities.insert({ id: crypto.randomUUID(), userId: ownerId, provider: 'after', subject: user.sub, email: null, createdAt: new Date().toISOString(), lastLoginAt: null })
    const linkedBefore = (await auditOf(app, 'idp_linked')).length
    const local = await browser.post('/portal/login', { email: user.email, password: user.password })
    t.equal(local.statusCode, 303, owner)
    t.match(await identityOf('after', user.sub), { userId: ownerId }, `${owner}: the link made meanwhile stands`)
    t.equal((await auditOf(app, 'idp_linked')).length, linkedBefore, `${owner}: no idp_linked`)
  }
})

t.test('a pending link lives ten minutes: a local sign-in after them still signs in, and completes nothing', async (t) => {
  const shift = shiftDateNow(t)
  for (const [seconds, links] of [[595, true], [601, false]] as const) {
    const user = await matching()
    const browser = new IdpBrowser(app)
    const { callback } = await browser.signIn('after')
    t.equal(callback.statusCode, 200)
    t.match(setCookies(callback).find((c) => c.name === '__Host-gh_flow')?.attributes, { 'max-age': '600' }, 'the browser keeps it ten minutes')
    shift(seconds * 1000)
    const local = await browser.post('/portal/login', { email: user.email, password: user.password, rd: '/portal/account' })
    shift(0)
    t.equal(local.statusCode, 303, `${seconds} s later`)
    t.equal(local.headers.location, `${PORTAL_ORIGIN}/portal/account`)
    t.match(accessClaims(local), { user_id: user.id })
    const linked = (await auditOf(app, 'idp_linked')).filter((r) => r.userId === user.id)
    if (links) {
      t.match(await identityOf('after', user.sub), { userId: user.id }, 'the negative control: within them, linked')
      t.equal(linked.length, 1)
    } else {
      t.equal(await identityOf('after', user.sub), undefined, 'after them, nothing linked')
      t.strictSame(linked, [])
    }
  }
})
