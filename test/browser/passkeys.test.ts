import type { BrowserContext, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { addPasskey, submit, virtualAuthenticator, type VirtualAuthenticator } from '../../scripts/portal-pages.js'
import { createUser, type CreatedUser, type TestContext } from '../helper.js'
import { enrolledUser, oathtool, totpApp } from '../routes/auth/two-factor/support.js'
import { axeViolations, launchChromium, listeningPortal, pageProblems } from '../routes/portal/chromium.js'
import { portalValues } from '../routes/portal/support.js'
import { PORTAL_PASSKEYS } from '../routes/portal/passkey-support.js'

/*
 * Passkeys in the portal (routes/portal/passkey.ts, routes/portal/account/passkeys.ts,
 * src/portal/assets/passkeys.js) in Debian's Chromium, against a real server listening on
 * 127.0.0.1 as auth.gh.localhost, with the RP ID on the parent domain gh.localhost. The
 * authenticator is Chromium's own virtual one (the DevTools protocol's WebAuthn domain: ctap2,
 * resident keys, user verification): Chromium runs the ceremonies, the portal's script only calls
 * navigator.credentials and posts the answer. One browser for the file.
 */

const browser = await launchChromium(t)

type ClockedApp = Awaited<ReturnType<typeof totpApp>>

/** The portal with passkeys and TOTP on (a clock the test sets), listening; `values` on top. */
async function portal (t: TestContext, values: Record<string, unknown> = {}): Promise<{ app: ClockedApp, origin: string }> {
  let built: ClockedApp | undefined
  const { origin } = await listeningPortal(t, { ...PORTAL_PASSKEYS, ...values }, async (t, settings) => (built = await totpApp(t, portalValues(settings))))
  return { app: built as ClockedApp, origin }
}

interface Browsing { context: BrowserContext, page: Page, problems: string[], authenticator: VirtualAuthenticator }

async function browse (t: TestContext, options: { javaScriptEnabled?: boolean } = {}): Promise<Browsing> {
  const context = await browser.newContext(options)
  t.teardown(() => context.close())
  const page = await context.newPage()
  const problems = pageProblems(page)
  return { context, page, problems, authenticator: await virtualAuthenticator(page) }
}

/**
 * Signs in with the password. The authenticator stays silent meanwhile: the virtual one answers a
 * conditional request at once, so with presence on the page's autofill request would sign in first.
 */
async function passwordSignIn (b: Browsing, origin: string, user: { email: string, password: string }): Promise<void> {
  await b.authenticator.presence(false)
  await b.page.goto(`${origin}/portal/login`)
  await b.page.getByLabel('Email', { exact: true }).fill(user.email)
  await b.page.getByLabel('Password', { exact: true }).fill(user.password)
  await submit(b.page, 'Sign in')
  await b.authenticator.presence(true)
}

/** Signed in with the password, a passkey named `name` added on the account page; then signed out (the cookies gone). */
async function registered (t: Test, b: Browsing, origin: string, user: CreatedUser, name = 'Laptop'): Promise<void> {
  await passwordSignIn(b, origin, user)
  t.equal(new URL(b.page.url()).pathname, '/portal/account')
  const added = await addPasskey(b.page, name)
  t.equal(added?.status(), 200)
  t.equal(b.page.url(), `${origin}/portal/account?done=passkey-add`, 'the form\'s 303 lands on the account page')
  await b.context.clearCookies()
}

/**
 * An init script: each navigator.credentials.get() leaves its mediation in window.__credentialRequests
 * and goes on to the browser's own, so a test can wait for the request the page itself starts.
 */
const RECORD_REQUESTS = `{
  const get = navigator.credentials.get.bind(navigator.credentials)
  window.__credentialRequests = []
  navigator.credentials.get = (options) => { window.__credentialRequests.push(options?.mediation ?? 'optional'); return get(options) }
}`

/**
 * Waits until the conditional request the sign-in page starts on load is pending in the browser, then
 * answers what a second request beside it gets (refused while one is pending; the same channel, so
 * the refusal also means the browser has taken the page's request). Only then may presence come back:
 * the virtual authenticator answers a request that starts while presence is on, so presence restored
 * before that lets the conditional request sign in by itself, racing the button's.
 */
async function besideConditional (page: Page): Promise<unknown> {
  // a function, not a string: Playwright polls a string predicate through eval() in the page, which the
  // page's CSP (no 'unsafe-eval') refused in a run under load
  await page.waitForFunction(() => (globalThis as { __credentialRequests?: string[] }).__credentialRequests?.includes('conditional') === true)
  return await page.evaluate('navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32) } }).then(() => "resolved", (err) => err.name + ": " + err.message)')
}

const cookieNames = async (context: BrowserContext): Promise<string[]> => (await context.cookies()).map((c) => c.name).sort()
const claimsOf = async (context: BrowserContext): Promise<Record<string, unknown>> => {
  const token = (await context.cookies()).find((c) => c.name === 'access_token')?.value ?? ''
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'))
}

t.test('the account page adds a passkey for the parent domain: the list shows it, the authenticator holds it, axe finds nothing serious', async (t) => {
  const { app, origin } = await portal(t)
  const user = await createUser(app, { name: 'Ada Lovelace' })
  const b = await browse(t)
  await passwordSignIn(b, origin, user)
  t.equal(await b.page.locator('main').getByText('No passkey yet.').count(), 1)
  t.same(await axeViolations(b.page), [], 'the account page without a passkey')

  const added = await addPasskey(b.page, 'Work laptop')
  t.equal(b.page.url(), `${origin}/portal/account?done=passkey-add`)
  t.equal(added?.status(), 200)
  t.equal(await b.page.getByRole('status').innerText(), 'The passkey was added. You can sign in with it now.')
  t.equal(await b.page.getByRole('textbox', { name: 'New name for the passkey Work laptop' }).inputValue(), 'Work laptop')
  t.same(await axeViolations(b.page), [], 'the account page with its passkeys list')

  const [held] = await b.authenticator.credentials()
  t.match(held, { rpId: 'gh.localhost', isResidentCredential: true }, 'a discoverable credential for the parent domain')
  const [stored] = await app.services.passkeys!.list(user.id)
  t.match(stored, { name: 'Work laptop', backup_eligible: false, backed_up: false })
  t.equal(Buffer.from(held?.credentialId ?? '', 'base64').toString('base64url'), stored?.id ?? '', 'the server holds the credential the authenticator made')
  t.same(b.problems, [], 'no console error, CSP violation or failed load')
})

t.test('the button\'s modal request signs in once the conditional one is aborted; a modal request beside a pending conditional one is refused', async (t) => {
  const { app, origin } = await portal(t)
  const user = await createUser(app)
  const b = await browse(t)
  await b.page.addInitScript(RECORD_REQUESTS)
  await registered(t, b, origin, user)

  // no presence: the conditional request the page starts on load waits, as for a person who has not chosen
  await b.authenticator.presence(false)
  const rd = `${origin}/auth/me`
  const options = b.page.waitForResponse((r) => r.url().endsWith('/auth/passkeys/login/options'))
  await b.page.goto(`${origin}/portal/login?rd=${encodeURIComponent(rd)}`)
  t.equal((await options).status(), 200, 'the page asked for request options on load')
  const button = b.page.getByRole('button', { name: 'Sign in with a passkey' })
  t.ok(await button.isVisible(), 'passkeys.js shows the button')
  t.same(await axeViolations(b.page), [], 'the sign-in page with the passkey button')
  // the negative control: a second request while the page's conditional one is pending is refused
  t.equal(await besideConditional(b.page), 'OperationError: A request is already pending.')

  await b.authenticator.presence(true)
  const [landed] = await Promise.all([b.page.waitForURL(rd), button.click()])
  t.equal(landed, undefined)
  t.match(JSON.parse(await b.page.locator('body').innerText()), { email: user.email }, '/auth/me reads the portal\'s cookie')
  t.same(await cookieNames(b.context), ['__Host-gh_csrf', '__Host-refresh_token', 'access_token'])
  t.match(await claimsOf(b.context), { aal: 'aal2', amr: ['pop', 'mfa'] }, 'a user-verified passkey sign-in')
  t.same(b.problems, [])
})

t.test('conditional UI: the request the sign-in page starts on load signs in through the autofill, without a click', async (t) => {
  const { app, origin } = await portal(t)
  const user = await createUser(app)
  const b = await browse(t)
  await registered(t, b, origin, user)

  // the virtual authenticator answers a conditional request at once, as a person picking the passkey in the email field's list
  const rd = `${origin}/auth/me`
  await Promise.all([b.page.waitForURL(rd), b.page.goto(`${origin}/portal/login?rd=${encodeURIComponent(rd)}`)])
  t.match(JSON.parse(await b.page.locator('body').innerText()), { email: user.email })
  t.same(b.problems, [])

  // the negative control: a browser that offers no conditional mediation stays on the page until the button is used
  await b.context.clearCookies()
  await b.page.addInitScript('PublicKeyCredential.isConditionalMediationAvailable = async () => false')
  await b.page.goto(`${origin}/portal/login?rd=${encodeURIComponent(rd)}`)
  await b.page.waitForTimeout(1000)
  t.equal(new URL(b.page.url()).pathname, '/portal/login', 'no conditional request, no sign-in')
  await Promise.all([b.page.waitForURL(rd), b.page.getByRole('button', { name: 'Sign in with a passkey' }).click()])
})

t.test('a passkey as the second factor: the two-factor page offers it to a TOTP user who has one', async (t) => {
  const { app, origin } = await portal(t)
  const user = await enrolledUser(app)
  const b = await browse(t)
  await passwordSignIn(b, origin, user)
  t.equal(new URL(b.page.url()).pathname, '/portal/2fa')
  t.equal(await b.page.getByRole('button', { name: 'Use a passkey instead' }).count(), 0, 'no passkey yet: not offered')
  await b.page.getByLabel('Code', { exact: true }).fill(oathtool(user.secret, app.testClock.now))
  await submit(b.page, 'Verify')
  await addPasskey(b.page, 'Phone')
  await b.context.clearCookies()

  await passwordSignIn(b, origin, user)
  t.equal(new URL(b.page.url()).pathname, '/portal/2fa')
  const button = b.page.getByRole('button', { name: 'Use a passkey instead' })
  t.ok(await button.isVisible())
  t.same(await axeViolations(b.page), [], 'the two-factor page with the passkey')
  await Promise.all([b.page.waitForURL(`${origin}/portal/account`), button.click()])
  t.match(await claimsOf(b.context), { aal: 'aal2', amr: ['pwd', 'pop', 'mfa'] })
  t.same(b.problems, [])
})

t.test('removed: the account page removes the passkey, its authenticator is refused (400 passkey_invalid); without the authenticator nothing signs in', async (t) => {
  const { app, origin } = await portal(t)
  const user = await createUser(app)
  const b = await browse(t)
  await b.page.addInitScript(RECORD_REQUESTS)
  await registered(t, b, origin, user)
  await passwordSignIn(b, origin, user)
  await b.page.getByLabel('Passkey to remove').selectOption({ index: 0 })
  t.equal((await submit(b.page, 'Remove the passkey'))?.status(), 200)
  t.equal(b.page.url(), `${origin}/portal/account?done=passkey-remove`)
  t.same(await app.services.passkeys!.list(user.id), [])
  t.equal((await b.authenticator.credentials()).length, 1, 'the authenticator still holds it')
  await b.context.clearCookies()

  // presence only once the page's conditional request is pending: the button's modal request answers, alone
  const posted: string[] = []
  b.page.on('request', (r) => { if (r.method() === 'POST' && r.url() === `${origin}/portal/passkey`) posted.push(r.url()) })
  await b.authenticator.presence(false)
  await b.page.goto(`${origin}/portal/login`)
  t.equal(await besideConditional(b.page), 'OperationError: A request is already pending.')
  await b.authenticator.presence(true)
  const [refused] = await Promise.all([b.page.waitForNavigation(), b.page.getByRole('button', { name: 'Sign in with a passkey' }).click()])
  t.equal(refused?.status(), 400)
  t.equal(b.page.url(), `${origin}/portal/passkey`)
  t.equal(await b.page.locator('#form-error').getAttribute('data-code'), 'passkey_invalid')
  t.same(await axeViolations(b.page), [], 'the sign-in page after a refused passkey')
  t.equal(posted.length, 1, 'one assertion posted, the button\'s: the conditional request did not answer too')
  t.same(await cookieNames(b.context), ['__Host-gh_csrf'])

  await b.authenticator.remove()
  await b.page.goto(`${origin}/portal/login`)
  await b.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await b.page.waitForTimeout(1500)
  t.equal(new URL(b.page.url()).pathname, '/portal/login', 'no authenticator answers: no sign-in')
  t.same(await cookieNames(b.context), ['__Host-gh_csrf'])
})

t.test('an old sign-in: adding asks the password (a wrong one is refused) or a new sign-in', async (t) => {
  const { app, origin } = await portal(t, { REAUTH_MAX_AGE: '5m' })
  const user = await createUser(app)
  const b = await browse(t)
  await passwordSignIn(b, origin, user)
  app.testClock.now += 6 * 60_000
  await b.page.goto(`${origin}/portal/account`)
  const again = b.page.getByRole('link', { name: 'sign in again' })
  t.equal(await again.getAttribute('href'), `${origin}/portal/login?prompt=login&rd=${encodeURIComponent(`${origin}/portal/account`)}`)
  t.same(await axeViolations(b.page), [], 'the account page asking the password')

  await b.page.getByLabel('Name of the new passkey').fill('Laptop')
  await b.page.locator('#passkey-add-password').fill('not-the-password')
  await b.page.getByRole('button', { name: 'Add a passkey' }).click()
  const alert = b.page.locator('p.alert[role="alert"]')
  await alert.waitFor()
  t.equal(await alert.getAttribute('data-code'), 'invalid_password')
  t.same(await b.authenticator.credentials(), [], 'no credential was made')

  t.equal((await addPasskey(b.page, 'Laptop', user.password))?.status(), 200)
  t.equal(b.page.url(), `${origin}/portal/account?done=passkey-add`)

  // a new sign-in makes it recent again: no password field
  await b.authenticator.presence(false)
  await Promise.all([b.page.waitForURL(/\/portal\/login\?prompt=login/), again.click()])
  await b.page.getByLabel('Email', { exact: true }).fill(user.email)
  await b.page.getByLabel('Password', { exact: true }).fill(user.password)
  await submit(b.page, 'Sign in')
  t.equal(b.page.url(), `${origin}/portal/account`)
  // the session service stamps auth_time with the wall clock, the recent check reads the app's (set ahead above): together again
  app.testClock.now = Date.now()
  await b.page.reload()
  t.equal(await b.page.locator('#passkey-add-password').count(), 0, 'the new sign-in is recent: no password asked')
})

t.test('without JavaScript the passkey controls stay hidden and the password still signs in', async (t) => {
  const { app, origin } = await portal(t)
  const user = await createUser(app)
  const b = await browse(t, { javaScriptEnabled: false })
  await b.page.goto(`${origin}/portal/login`)
  t.equal(await b.page.locator('form[data-passkey]').count(), 1, 'the form is in the page')
  t.notOk(await b.page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(), 'but hidden')
  await passwordSignIn(b, origin, user)
  t.equal(b.page.url(), `${origin}/portal/account`)
  // (Chromium with scripts switched off by the DevTools protocol still parses <noscript> as text: its markup is what shows)
  t.match(await b.page.content(), '<noscript><p class="muted">Adding a passkey needs JavaScript.</p></noscript>')
  t.notOk(await b.page.getByRole('button', { name: 'Add a passkey' }).isVisible())
})
