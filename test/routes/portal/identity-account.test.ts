import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, createUser, type CreatedUser, type TestContext } from '../../helper.js'
import { testClock } from '../auth/two-factor/support.js'
import { idpValues, linkIdentity, PROVIDERS } from '../api/identities-support.js'
import { CLIENT_SECRET, IdpBrowser, redirectUri } from '../../idp/support.js'
import { startUpstream } from '../../idp/upstream.js'
import { alertCode, PAGE_HEADERS, PageClient, portalValues, PORTAL_ORIGIN } from './support.js'

/*
 * The account page's connected accounts (routes/portal/account/identities.ts, routes/portal/account/page.ts,
 * src/portal/templates/partials/identities.eta) over inject: the list and the connect links, disconnecting
 * with recent authentication (the sign-in's age, or the password beside the button), the last
 * credential kept, each failure shown as the account page with the JSON route's status and code.
 */

const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`
const HOSTILE = '"><img src=x onerror=alert(1)><script>alert(1)</script>'

type Clocked = FastifyInstance & { clock: { now: number } }

async function identitiesApp (t: TestContext, values: Record<string, unknown> = {}): Promise<Clocked> {
  const clock = testClock()
  const app = await build(t, idpValues(t, { REAUTH_MAX_AGE: '5m', ...values }), { clock: clock.clock })
  return Object.assign(app, { clock })
}

async function signedIn (app: FastifyInstance, user?: CreatedUser): Promise<{ browser: PageClient, user: CreatedUser }> {
  const who = user ?? await createUser(app)
  const browser = new PageClient(app)
  const res = await browser.post('/portal/login', { email: who.email, password: who.password })
  if (res.statusCode !== 303) throw new Error(`sign-in: ${res.statusCode}`)
  return { browser, user: who }
}

/** The disconnect form's button of the identity, as the page writes it. */
const removeForm = (id: string) => `<input type="hidden" name="identity" value="${id}">`

t.test('the section: each connected account with a disconnect form, a link to connect each provider not yet connected', async (t) => {
  const app = await identitiesApp(t)
  const { browser, user } = await signedIn(app)
  const none = await browser.get('/portal/account')
  t.equal(none.statusCode, 200)
  t.match(none.headers, PAGE_HEADERS)
  t.match(none.body, '<h2>Connected accounts</h2>')
  t.match(none.body, '<p class="muted">No account connected yet.</p>')
  const start = (id: string) => `${PORTAL_ORIGIN}/auth/idp/${id}/start?intent=link&amp;rd=${encodeURIComponent(ACCOUNT)}`
  t.match(none.body, `<li><a href="${start('github')}">Connect GitHub</a></li>`)
  t.match(none.body, `<li><a href="${start('ghe')}">Connect GitHub &lt;Enterprise&gt; &amp; Co</a></li>`, 'the display name escaped')

  const identity = await linkIdentity(app, user.id, 'github', { createdAt: '2026-03-04T05:06:07.000Z', email: HOSTILE })
  const page = (await browser.get('/portal/account')).body
  t.match(page, '<td>GitHub</td>')
  t.match(page, '<td><time datetime="2026-03-04T05:06:07.000Z">2026-03-04 05:06 UTC</time></td>')
  t.match(page, removeForm(identity.id))
  t.match(page, '<button type="submit" class="secondary" aria-label="Disconnect GitHub (&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(1)&lt;/script&gt;)">Disconnect</button>')
  t.notMatch(page, '<script>alert(1)</script>', 'an upstream email is anyone\'s to choose: escaped everywhere')
  t.notMatch(page, '"><img')
  t.notMatch(page, `href="${start('github')}"`, 'connected: no link for it')
  t.match(page, `href="${start('ghe')}"`)
  t.notMatch(page, 'name="password" type="password" autocomplete="current-password" aria-label="Your password', 'a recent sign-in: no password asked')

  // a provider gone from the file: listed by its id, and nothing to connect for it
  await linkIdentity(app, user.id, 'retired', { email: null })
  t.match((await browser.get('/portal/account')).body, '<td>retired</td>\n<td>—</td>')

  // the negative control: the feature off, no section
  const off = await build(t, portalValues())
  const { browser: other } = await signedIn(off)
  t.notMatch((await other.get('/portal/account')).body, 'Connected accounts')
})

t.test('disconnecting with a recent sign-in: 303 /portal/account?done=identity-remove, the notice, the row gone, audited', async (t) => {
  const app = await identitiesApp(t)
  const { browser, user } = await signedIn(app)
  const identity = await linkIdentity(app, user.id, 'ghe')
  const res = await browser.post('/portal/account/identity-remove', { identity: identity.id })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${ACCOUNT}?done=identity-remove`)
  const page = (await browser.get('/portal/account?done=identity-remove')).body
  t.match(page, '<p class="notice" role="status">The account was disconnected. It no longer signs you in.</p>')
  t.notMatch(page, removeForm(identity.id))
  t.same(await app.store.identities.listOf(user.id), [])
  const { entries } = await app.auditTrail.page({ event: 'idp_unlinked' }, 1, 10)
  t.strictSame(entries.map((e) => [e.actorId, e.userId, e.detail]), [[user.id, user.id, 'idp:ghe']])
})

t.test('after REAUTH_MAX_AGE: a password beside each button; none → 403 reauth_required, a wrong one → 400 beside its row, the right one disconnects', async (t) => {
  const app = await identitiesApp(t)
  const { browser, user } = await signedIn(app)
  const first = await linkIdentity(app, user.id, 'github')
  const second = await linkIdentity(app, user.id, 'ghe')
  app.clock.now += 6 * 60_000
  const page = (await browser.get('/portal/account')).body
  t.match(page, `<a href="${PORTAL_ORIGIN}/portal/login?prompt=login&amp;rd=${encodeURIComponent(ACCOUNT)}">sign in again</a>`)
  t.match(page, `<input id="identity-${first.id}-password" name="password" type="password" autocomplete="current-password" aria-label="Your password, to disconnect GitHub" required>`)

  const stale = await browser.post('/portal/account/identity-remove', { identity: first.id, password: '' })
  t.equal(stale.statusCode, 403)
  t.equal(alertCode(stale.body), 'reauth_required')
  const wrong = await browser.post('/portal/account/identity-remove', { identity: second.id, password: 'not-the-password' })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_password')
  t.match(wrong.body, `<input id="identity-${second.id}-password" name="password" type="password" autocomplete="current-password" aria-label="Your password, to disconnect GitHub &lt;Enterprise&gt; &amp; Co" required aria-invalid="true" aria-describedby="identity-${second.id}-password-error">`)
  t.match(wrong.body, `<p class="field-error" id="identity-${second.id}-password-error">The current password is incorrect</p>`)
  t.notMatch(wrong.body, `id="identity-${first.id}-password-error"`, 'only beside the row whose form failed')
  t.equal((await app.store.identities.listOf(user.id)).length, 2, 'nothing removed by the refusals')

  const right = await browser.post('/portal/account/identity-remove', { identity: second.id, password: user.password })
  t.equal(right.statusCode, 303)
  t.strictSame((await app.store.identities.listOf(user.id)).map((i) => i.id), [first.id])
})

t.test('the last way to sign in stays: 409 last_credential on the account page, said beside the account', async (t) => {
  const app = await identitiesApp(t)
  const { browser, user } = await signedIn(app)
  const identity = await linkIdentity(app, user.id, 'github')
  await app.store.users.setPasswordHash(user.id, '', new Date(app.clock.now).toISOString())
  const res = await browser.post('/portal/account/identity-remove', { identity: identity.id })
  t.equal(res.statusCode, 409)
  t.equal(alertCode(res.body), 'last_credential')
  t.match(res.body, `aria-label="Disconnect GitHub (${identity.email ?? ''})" aria-describedby="identity-${identity.id}-error">Disconnect</button>`)
  t.match(res.body, `<p class="field-error" id="identity-${identity.id}-error">GitHub is the last way you can sign in to this account. Connect another account first.</p>`)
  t.equal((await app.store.identities.listOf(user.id)).length, 1)

  // with passkeys on, the way out names them too
  const withPasskeys = await identitiesApp(t, { ENABLE_PASSKEYS: true, DATA_ENCRYPTION_KEYS: `t1:${Buffer.alloc(32, 7).toString('base64')}` })
  const { browser: other, user: passwordless } = await signedIn(withPasskeys)
  const theirs = await linkIdentity(withPasskeys, passwordless.id, 'ghe')
  await withPasskeys.store.users.setPasswordHash(passwordless.id, '', new Date(withPasskeys.clock.now).toISOString())
  const refused = await other.post('/portal/account/identity-remove', { identity: theirs.id })
  t.match(refused.body, 'GitHub &lt;Enterprise&gt; &amp; Co is the last way you can sign in to this account. Add a passkey or connect another account first.')
})

t.test('another user\'s or an unknown identity: 404 on the account page; a malformed id 422; no session → the sign-in page; no CSRF token → 403', async (t) => {
  const app = await identitiesApp(t)
  const { browser } = await signedIn(app)
  const stranger = await createUser(app)
  const theirs = await linkIdentity(app, stranger.id, 'github')
  for (const id of [theirs.id, '00000000-0000-4000-8000-000000000000']) {
    const res = await browser.post('/portal/account/identity-remove', { identity: id })
    t.equal(res.statusCode, 404)
    t.equal(alertCode(res.body), 'not_found')
    t.match(res.body, '<h1>Your account</h1>')
  }
  t.equal((await browser.post('/portal/account/identity-remove', { identity: 'nope' })).statusCode, 422)
  t.equal((await app.store.identities.listOf(stranger.id)).length, 1, 'theirs stays')

  const anonymous = new PageClient(app)
  const res = await anonymous.post('/portal/account/identity-remove', { identity: theirs.id })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(ACCOUNT)}`)
  const forged = await browser.post('/portal/account/identity-remove', { identity: theirs.id, csrf: 'y'.repeat(43) })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')

  const off = await build(t, portalValues())
  const { browser: elsewhere } = await signedIn(off)
  t.equal((await elsewhere.post('/portal/account/identity-remove', { identity: theirs.id })).statusCode, 404, 'off: no such action')
})

t.test('Connect: the link goes through the provider and back to the account page, which lists the account; a provider not discovered has no link', async (t) => {
  const upstream = await startUpstream([{ client_id: 'gatehouse', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri('corp')] }])
  t.teardown(upstream.stop)
  const corp = { id: 'corp', type: 'oidc', display_name: 'Corp SSO', client_id: 'gatehouse', issuer: upstream.issuer }
  // nothing listens on port 9 of loopback: its discovery fails, so it is hidden as on the sign-in page
  const down = { id: 'down', type: 'oidc', display_name: 'Down SSO', client_id: 'gatehouse', issuer: 'http://127.0.0.1:9' }
  const app = await build(t, idpValues(t, {}, [...PROVIDERS, corp, down]))
  const user = await createUser(app)
  const browser = new IdpBrowser(app)
  t.equal((await browser.post('/portal/login', { email: user.email, password: user.password })).statusCode, 303)
  const before = (await browser.get('/portal/account')).body
  const link = `${PORTAL_ORIGIN}/auth/idp/corp/start?intent=link&rd=${encodeURIComponent(ACCOUNT)}`
  t.match(before, `<li><a href="${link.replace('&', '&amp;')}">Connect Corp SSO</a></li>`)
  t.notMatch(before, 'Connect Down SSO')

  upstream.script({ sub: 'corp-42', email: 'someone-else@corp.example', email_verified: true, name: 'Upstream Name' })
  const { callback } = await browser.signIn('corp', new URL(link).search)
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, ACCOUNT)
  const [linked] = await app.store.identities.listOf(user.id)
  t.match(linked, { provider: 'corp', subject: 'corp-42', email: 'someone-else@corp.example' })
  const after = (await browser.get('/portal/account')).body
  t.match(after, '<td>Corp SSO</td>\n<td>someone-else@corp.example</td>')
  t.notMatch(after, 'Connect Corp SSO', 'connected: no link any more')
})
