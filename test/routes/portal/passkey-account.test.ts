import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, createUser, type CreatedUser, type TestContext } from '../../helper.js'
import { SoftAuthenticator } from '../../webauthn-authenticator.js'
import { testClock } from '../auth/two-factor/support.js'
import { alertCode, PAGE_HEADERS, PageClient, portalValues, PORTAL_ORIGIN } from './support.js'
import { PORTAL_PASSKEYS } from './passkey-support.js'

/*
 * The account page's passkeys (routes/portal/account/passkeys.ts, routes/portal/account/page.ts,
 * src/portal/templates/partials/passkeys.eta) over inject: the section, recent authentication
 * (the password, or a new sign-in via /portal/login?prompt=login), and each action's failures
 * shown as the account page with the JSON route's status and code.
 */

const PASSKEYS = { ...PORTAL_PASSKEYS, REAUTH_MAX_AGE: '5m' }
const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`
const HOSTILE = '"><img src=x onerror=alert(1)><script>alert(1)</script>'

type Clocked = FastifyInstance & { clock: { now: number } }

async function passkeysApp (t: TestContext, values: Record<string, unknown> = {}): Promise<Clocked> {
  const clock = testClock()
  const app = await build(t, portalValues({ ...PASSKEYS, ...values }), { clock: clock.clock })
  return Object.assign(app, { clock })
}

/** A browser signed in as a new user (or `user`) through the sign-in page. */
async function signedIn (app: FastifyInstance): Promise<{ browser: PageClient, user: CreatedUser }> {
  return await signedInAs(app, await createUser(app))
}

async function signedInAs (app: FastifyInstance, user: CreatedUser): Promise<{ browser: PageClient, user: CreatedUser }> {
  const browser = new PageClient(app)
  const res = await browser.post('/portal/login', { email: user.email, password: user.password })
  if (res.statusCode !== 303) throw new Error(`sign-in: ${res.statusCode}`)
  return { browser, user }
}

const fieldErrorOf = (html: string, id: string): string | undefined => new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(html)?.[1]

t.test('the section: no passkey yet, the add form hidden for passkeys.js with the options route, a note without JavaScript; recent: no password asked', async (t) => {
  const app = await passkeysApp(t)
  const { browser } = await signedIn(app)
  const page = await browser.get('/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, PAGE_HEADERS)
  t.match(page.body, '<h2>Passkeys</h2>')
  t.match(page.body, '<p class="muted">No passkey yet.</p>')
  t.match(page.body, `<form method="post" action="/portal/account/passkey-add" class="passkey" data-passkey="register" data-options-url="${PORTAL_ORIGIN}/auth/passkeys/register/options" hidden>`)
  t.match(page.body, '<noscript><p class="muted">Adding a passkey needs JavaScript.</p></noscript>')
  t.match(page.body, /<script src="[^"]+\/portal\/assets\/passkeys\.[0-9a-f]{10}\.js" defer><\/script>/)
  t.notMatch(page.body, 'id="passkey-add-password"')
  t.notMatch(page.body, 'sign in again')
  t.notMatch(page.body, 'action="/portal/account/passkey-remove"', 'nothing to remove')

  // the negative control: passkeys off, no section
  const off = await build(t, portalValues())
  const { browser: other } = await signedIn(off)
  t.notMatch((await other.get('/portal/account')).body, '<h2>Passkeys</h2>')
})

t.test('a sign-in older than REAUTH_MAX_AGE: the page asks the password, or a new sign-in at /portal/login?prompt=login', async (t) => {
  const app = await passkeysApp(t)
  const { browser } = await signedIn(app)
  app.clock.now += 6 * 60_000
  const page = await browser.get('/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.body, `<a href="${PORTAL_ORIGIN}/portal/login?prompt=login&amp;rd=${encodeURIComponent(ACCOUNT)}">sign in again</a>`)
  t.match(page.body, /<input id="passkey-add-password" name="password" type="password" autocomplete="current-password" required aria-describedby="passkey-add-password-hint">/)

  // the link's page shows the form even to a browser with a session, and signing in makes it recent again
  const prompt = await browser.get(`/portal/login?prompt=login&rd=${encodeURIComponent(ACCOUNT)}`)
  t.equal(prompt.statusCode, 200)
  t.equal(prompt.headers.location, undefined)
})

t.test('POST /portal/account/passkey-*: no portal session → 303 to the sign-in page; no CSRF token → 403', async (t) => {
  const app = await passkeysApp(t)
  const anonymous = new PageClient(app)
  for (const action of ['passkey-add', 'passkey-rename', 'passkey-remove']) {
    const res = await anonymous.post(`/portal/account/${action}`, { passkey: 'x', name: 'x', challenge_id: 'x', credential: '{}' })
    t.equal(res.statusCode, 303, action)
    t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(ACCOUNT)}`)
  }
  const { browser } = await signedIn(app)
  const forged = await browser.post('/portal/account/passkey-remove', { passkey: 'x', csrf: 'y'.repeat(43) })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
})

t.test('adding with a credential that does not verify: the account page again, 400 passkey_invalid', async (t) => {
  const app = await passkeysApp(t)
  const { browser, user } = await signedIn(app)
  for (const credential of ['not json', '{}', '{"id":"AAAA","type":"public-key","response":{}}']) {
    const res = await browser.post('/portal/account/passkey-add', { challenge_id: 'x', credential, name: 'Laptop' })
    t.equal(res.statusCode, 400, credential)
    t.equal(alertCode(res.body), 'passkey_invalid')
    t.match(res.body, '<h1>Your account</h1>')
  }
  t.same(await app.services.passkeys?.list(user.id), [], 'nothing was stored')
})

t.test('renaming or removing an unknown passkey: 404 on the account page; a blank name: 422', async (t) => {
  const app = await passkeysApp(t)
  const { browser } = await signedIn(app)
  const unknown = 'AAAAAAAAAAAAAAAAAAAAAA'
  const rename = await browser.post('/portal/account/passkey-rename', { passkey: unknown, name: 'Phone' })
  t.equal(rename.statusCode, 404)
  t.equal(alertCode(rename.body), 'not_found')
  const blank = await browser.post('/portal/account/passkey-rename', { passkey: unknown, name: '   ' })
  t.equal(blank.statusCode, 422)
  const long = await browser.post('/portal/account/passkey-rename', { passkey: unknown, name: 'x'.repeat(65) })
  t.equal(long.statusCode, 422)
  const remove = await browser.post('/portal/account/passkey-remove', { passkey: unknown })
  t.equal(remove.statusCode, 404)
  t.equal(alertCode(remove.body), 'not_found')
})

t.test('removing after REAUTH_MAX_AGE: 403 reauth_required without the password, 400 invalid_password beside the field with a wrong one', async (t) => {
  const app = await passkeysApp(t)
  const { browser, user } = await signedIn(app)
  app.clock.now += 6 * 60_000
  const unknown = 'AAAAAAAAAAAAAAAAAAAAAA'
  const stale = await browser.post('/portal/account/passkey-remove', { passkey: unknown, password: '' })
  t.equal(stale.statusCode, 403)
  t.equal(alertCode(stale.body), 'reauth_required')
  t.match(stale.body, 'sign in again')
  const wrong = await browser.post('/portal/account/passkey-remove', { passkey: unknown, password: 'not-the-password' })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_password')
  t.equal(fieldErrorOf(wrong.body, 'passkey-remove-password'), undefined, 'no passkey, no remove form to show it beside')
  // the password proves it: on to the passkey's own verdict
  const right = await browser.post('/portal/account/passkey-remove', { passkey: unknown, password: user.password })
  t.equal(right.statusCode, 404)
})

/** What passkeys.js does on "Add a passkey": options from the JSON route with the portal's cookie, then the form. */
async function addWith (app: FastifyInstance, browser: PageClient, authenticator: SoftAuthenticator, name: string): ReturnType<PageClient['post']> {
  const options = await app.inject({
    method: 'POST',
    url: '/auth/passkeys/register/options',
    payload: {},
    // the browser's request: same origin as the page (the guard's Origin rule for a cookie)
    headers: { cookie: browser.cookieHeader(), origin: PORTAL_ORIGIN, host: new URL(PORTAL_ORIGIN).host }
  })
  if (options.statusCode !== 200) throw new Error(`options: ${options.statusCode} ${options.body}`)
  const { challenge_id: challengeId, options: creation } = options.json()
  return await browser.post('/portal/account/passkey-add', { challenge_id: challengeId, credential: JSON.stringify(authenticator.create(creation)), name })
}

t.test('add, rename, remove: each 303 /portal/account?done=…, the list as the JSON route sees it', async (t) => {
  const app = await passkeysApp(t)
  const { browser, user } = await signedIn(app)
  const authenticator = new SoftAuthenticator(PORTAL_ORIGIN)
  const added = await addWith(app, browser, authenticator, '  Work laptop ')
  t.equal(added.statusCode, 303)
  t.equal(added.headers.location, `${ACCOUNT}?done=passkey-add`)
  const [passkey] = await app.services.passkeys?.list(user.id) ?? []
  t.match(passkey, { id: authenticator.credentials[0]?.id.toString('base64url'), name: 'Work laptop' })
  const page = await browser.get('/portal/account?done=passkey-add')
  t.match(page.body, '<p class="notice" role="status">The passkey was added. You can sign in with it now.</p>')
  t.match(page.body, '<input type="text" name="name" value="Work laptop" aria-label="New name for the passkey Work laptop" maxlength="64" required>')
  t.match(page.body, `<option value="${passkey?.id ?? ''}">Work laptop (added `)
  // a second later (the app's clock stands still otherwise, and two passkeys of one instant have no order)
  app.clock.now += 1000
  const unnamed = await addWith(app, browser, new SoftAuthenticator(PORTAL_ORIGIN), '')
  t.equal(unnamed.statusCode, 303)
  t.same((await app.services.passkeys?.list(user.id) ?? []).map((p) => p.name), ['Passkey', 'Work laptop'], 'a blank name is the default, newest first')

  const renamed = await browser.post('/portal/account/passkey-rename', { passkey: passkey?.id ?? '', name: HOSTILE })
  t.equal(renamed.statusCode, 303)
  t.equal(renamed.headers.location, `${ACCOUNT}?done=passkey-rename`)
  // a name is anyone's to choose: the page shows it as text in the field, the label and the list
  const shown = (await browser.get('/portal/account')).body
  t.notMatch(shown, '<script>alert(1)</script>')
  t.notMatch(shown, '"><img')
  const escaped = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
  t.equal(shown.split(escaped).length - 1, 3, 'escaped in the rename field, its label and the remove list')
  // another user's passkey is as unknown as one that does not exist
  const { browser: stranger } = await signedIn(app)
  t.equal((await stranger.post('/portal/account/passkey-rename', { passkey: passkey?.id ?? '', name: 'Mine' })).statusCode, 404)
  t.equal((await stranger.post('/portal/account/passkey-remove', { passkey: passkey?.id ?? '' })).statusCode, 404)

  const removed = await browser.post('/portal/account/passkey-remove', { passkey: passkey?.id ?? '', password: '' })
  t.equal(removed.statusCode, 303)
  t.equal(removed.headers.location, `${ACCOUNT}?done=passkey-remove`)
  t.same((await app.services.passkeys?.list(user.id) ?? []).map((p) => p.name), ['Passkey'])
})

t.test('a user without a password keeps their last passkey: 409 last_credential on the account page', async (t) => {
  const app = await passkeysApp(t)
  const user = await createUser(app)
  const authenticator = new SoftAuthenticator(PORTAL_ORIGIN)
  const { browser } = await signedInAs(app, user)
  t.equal((await addWith(app, browser, authenticator, 'Only one')).statusCode, 303)
  await app.store.users.setPasswordHash(user.id, '', new Date().toISOString())
  const [passkey] = await app.services.passkeys?.list(user.id) ?? []
  const res = await browser.post('/portal/account/passkey-remove', { passkey: passkey?.id ?? '' })
  t.equal(res.statusCode, 409)
  t.equal(alertCode(res.body), 'last_credential')
  t.equal((await app.services.passkeys?.list(user.id) ?? []).length, 1, 'still there')
})

t.test('removing after REAUTH_MAX_AGE with a wrong password: the message beside the remove form\'s password field, no other', async (t) => {
  const app = await passkeysApp(t, { ENABLE_TOTP: true })
  const { browser, user } = await signedIn(app)
  t.equal((await addWith(app, browser, new SoftAuthenticator(PORTAL_ORIGIN), 'Laptop')).statusCode, 303)
  const [passkey] = await app.services.passkeys?.list(user.id) ?? []
  app.clock.now += 6 * 60_000
  const wrong = await browser.post('/portal/account/passkey-remove', { passkey: passkey?.id ?? '', password: 'not-the-password' })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_password')
  t.equal(fieldErrorOf(wrong.body, 'passkey-remove-password'), 'The current password is incorrect')
  t.match(wrong.body, /<input id="passkey-remove-password" name="password" type="password" autocomplete="current-password" required aria-invalid="true" aria-describedby="passkey-remove-password-hint passkey-remove-password-error">/)
  t.equal(fieldErrorOf(wrong.body, 'password'), undefined, 'the two-factor form\'s password field shows nothing')
  t.equal(fieldErrorOf(wrong.body, 'passkey-add-password'), undefined, 'nor the add form\'s')
  const right = await browser.post('/portal/account/passkey-remove', { passkey: passkey?.id ?? '', password: user.password })
  t.equal(right.statusCode, 303)
  t.same(await app.services.passkeys?.list(user.id), [])
})
