import type { FastifyInstance } from 'fastify'
import { Secret, TOTP } from 'otpauth'
import type { Page, Response } from 'playwright-core'

/*
 * Every page of the portal and its main error states, one row each, as a browser reaches them:
 * the table test/browser/portal.test.ts loads in Chromium (axe-core, CSP, status) and
 * scripts/portal-screenshots.ts photographs for docs/portal.md. A new page is one more row.
 */

/** Strings that would run as markup if any page printed them unescaped. */
export const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '\'><svg onload=alert(1)>'] as const

/** The host the pages may return to besides their own (PORTAL_RETURN_HOSTS): an application. */
export const APP_HOST = 'app.gh.localhost'

/** The settings under which every page exists, for a portal on `origin` (http://auth.gh.localhost:<port>). */
export function portalSettings (origin: string): Record<string, unknown> {
  return {
    ENABLE_PORTAL: true,
    PUBLIC_URL: origin,
    PORTAL_RETURN_HOSTS: APP_HOST,
    ENABLE_REGISTER: true,
    ENABLE_PASSWORD_RESET: true,
    ENABLE_EMAIL_OTP: true,
    ENABLE_TOTP: true,
    ENABLE_PASSKEYS: true,
    // passkeys for the parent domain, as applications on its other subdomains would share them
    WEBAUTHN_RP_ID: 'gh.localhost',
    DATA_ENCRYPTION_KEYS: `portal:${Buffer.alloc(32, 7).toString('base64')}`
  }
}

export interface DemoUser { id: string, email: string, password: string, name: string }

/** What the rows act on: the portal's origin, an application's origin, and the demo users. */
export interface Demo {
  origin: string
  /** an origin on APP_HOST, same port: a return target on another host */
  appOrigin: string
  user: DemoUser
  /** a user with TOTP on (signing in leads to /portal/2fa) */
  totpUser: DemoUser & { secret: string, recoveryCodes: string[] }
}

async function json (app: FastifyInstance, url: string, payload: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** Creates the demo users through the service and the JSON routes (TOTP enrolled and confirmed). */
export async function seedDemo (app: FastifyInstance, origin: string, names: { user?: string, totp?: string } = {}): Promise<Demo> {
  const password = 'Demo-Password-42'
  const make = async (email: string, name: string): Promise<DemoUser> => {
    const created = await app.services.users.create({ email, password, name, roles: ['user'], isSuperuser: false })
    return { id: created.id, email, password, name }
  }
  const user = await make('ada@example.com', names.user ?? 'Ada Lovelace')
  const totp = await make('grace@example.com', names.totp ?? 'Grace Hopper')
  const access = (await json(app, '/auth/login', { email: totp.email, password })).access_token as string
  const secret = (await json(app, '/auth/enable-2fa', { password }, access)).secret as string
  const verified = await json(app, '/auth/verify-2fa', { code: new TOTP({ secret: Secret.fromBase32(secret) }).generate() }, access)
  const port = new URL(origin).port
  return { origin, appOrigin: `http://${APP_HOST}${port === '' ? '' : `:${port}`}`, user, totpUser: { ...totp, secret, recoveryCodes: verified.recovery_codes as string[] } }
}

/** A six-digit code that is not the one of `secret` now, nor of the steps either side. */
function wrongCode (secret: string): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret) })
  const valid = new Set([-30_000, 0, 30_000].map((offset) => totp.generate({ timestamp: Date.now() + offset })))
  let code = 0
  while (valid.has(String(code).padStart(6, '0'))) code++
  return String(code).padStart(6, '0')
}

/** Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain) on one page: a platform authenticator with user verification. */
export interface VirtualAuthenticator {
  /** the credentials it holds, as the protocol lists them (`rpId`, `isResidentCredential`, `userHandle`, `signCount`) */
  credentials (): Promise<Array<{ credentialId: string, rpId?: string, isResidentCredential: boolean, userHandle?: string, signCount: number }>>
  /** whether it answers at once (on) or leaves every request waiting for a touch that never comes (off) */
  presence (on: boolean): Promise<void>
  /** takes it away, with its credentials */
  remove (): Promise<void>
}

export async function virtualAuthenticator (page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const options = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options })
  return {
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
    presence: async (on) => { await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: on }) },
    remove: async () => { await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId }) }
  }
}

/** On the account page: names a new passkey and adds it (passkeys.js: options, the authenticator, the form); the answer it navigates to. */
export async function addPasskey (page: Page, name: string, password?: string): Promise<Response | null> {
  await page.getByLabel('Name of the new passkey').fill(name)
  if (password !== undefined) await page.locator('#passkey-add-password').fill(password)
  return await submit(page, 'Add a passkey')
}

/** Submits a form by its button (the one named `button`, else the page's first) and waits for the answer it navigates to. */
export async function submit (page: Page, button?: string): Promise<Response | null> {
  const target = button === undefined ? page.locator('button[type="submit"]').first() : page.getByRole('button', { name: button, exact: true })
  const [response] = await Promise.all([page.waitForNavigation(), target.click()])
  return response
}

interface FormOptions {
  /** the button's name, when the page has several forms */
  button?: string
  /** the browser's own checks stand aside, so the server's 422 and its field messages show */
  noValidate?: boolean
}

/** Fills the fields of the page on screen by their labels and submits (the answer it navigates to). */
export async function fill (page: Page, fields: Record<string, string>, options: FormOptions = {}): Promise<Response | null> {
  if (options.noValidate === true) await page.evaluate('document.querySelectorAll("form").forEach((form) => { form.noValidate = true })')
  for (const [label, value] of Object.entries(fields)) await page.getByLabel(label, { exact: true }).fill(value)
  return await submit(page, options.button)
}

/**
 * Fills the sign-in form of /portal/login (with `query`: `?rd=…`) and submits it. With a virtual
 * `authenticator`, it stays silent meanwhile: it answers the page's conditional request at once,
 * which would sign in with a passkey first.
 */
export async function signIn (page: Page, demo: Demo, user: { email: string, password: string }, query = '', authenticator?: VirtualAuthenticator): Promise<Response | null> {
  await authenticator?.presence(false)
  await page.goto(`${demo.origin}/portal/login${query}`)
  const response = await fill(page, { Email: user.email, Password: user.password })
  await authenticator?.presence(true)
  return response
}

/** One state of one page: where a fresh, signed-out browser finds it, and the status it answers. */
export interface PageState {
  /** the screenshot's name (docs/portal/<name>.png) and the test's */
  name: string
  /** the GET route the state is shown at, as registered (`/portal/login`) */
  route: string
  status: number
  /** the width the screenshot is taken at: a phone's (390) or a desktop's (1000) */
  width: 390 | 1000
  reach (page: Page, demo: Demo): Promise<Response | null>
}

/** A page as a signed-out browser opens it. */
const open = (path: string) => async (page: Page, demo: Demo) => await page.goto(`${demo.origin}${path}`)
/** A page opened, then its form filled and submitted. */
const sent = (path: string, fields: (demo: Demo) => Record<string, string>, options?: FormOptions) => async (page: Page, demo: Demo) => {
  await page.goto(`${demo.origin}${path}`)
  return await fill(page, fields(demo), options)
}
/** Signed in as the demo user first (landing on the account page), then `then`. */
const signedIn = (then?: (page: Page, demo: Demo) => Promise<Response | null>) => async (page: Page, demo: Demo) => {
  const landed = await signIn(page, demo, demo.user)
  return then === undefined ? landed : await then(page, demo)
}
/** The TOTP user's password accepted: the second step on screen, then `then`. */
const secondStep = (then?: (page: Page, demo: Demo) => Promise<Response | null>) => async (page: Page, demo: Demo) => {
  const landed = await signIn(page, demo, demo.totpUser)
  return then === undefined ? landed : await then(page, demo)
}
const RESET_LINK = `/portal/reset#token=${'x'.repeat(43)}`
const NEW_PASSWORD = 'A-new-password-42'

export const PAGES: PageState[] = [
  { name: 'login', route: '/portal/login', status: 200, width: 390, reach: open('/portal/login') },
  { name: 'login-wrong-password', route: '/portal/login', status: 401, width: 390, reach: sent('/portal/login', (demo) => ({ Email: demo.user.email, Password: 'not-the-password' })) },
  { name: 'login-invalid', route: '/portal/login', status: 422, width: 1000, reach: sent('/portal/login', () => ({ Email: 'not-an-address' }), { noValidate: true }) },
  {
    // the CSRF cookie is gone (a browser that dropped it) when the form is sent
    name: 'csrf-rejected',
    route: '/portal/login',
    status: 403,
    width: 1000,
    reach: async (page, demo) => {
      await page.goto(`${demo.origin}/portal/login`)
      await page.context().clearCookies({ name: '__Host-gh_csrf' })
      return await fill(page, { Email: demo.user.email, Password: demo.user.password })
    }
  },
  { name: 'two-factor', route: '/portal/2fa', status: 200, width: 390, reach: secondStep() },
  { name: 'two-factor-wrong-code', route: '/portal/2fa', status: 400, width: 390, reach: secondStep(async (page, demo) => await fill(page, { Code: wrongCode(demo.totpUser.secret) })) },
  { name: 'two-factor-recovery', route: '/portal/2fa', status: 200, width: 1000, reach: secondStep(open('/portal/2fa?use=recovery')) },
  { name: 'code', route: '/portal/code', status: 200, width: 390, reach: open('/portal/code') },
  { name: 'code-verify', route: '/portal/code/verify', status: 200, width: 390, reach: sent('/portal/code', (demo) => ({ Email: demo.user.email })) },
  {
    name: 'code-verify-wrong-code',
    route: '/portal/code/verify',
    status: 400,
    width: 1000,
    reach: async (page, demo) => {
      await sent('/portal/code', () => ({ Email: demo.user.email }))(page, demo)
      return await fill(page, { Code: '000000' })
    }
  },
  { name: 'register', route: '/portal/register', status: 200, width: 390, reach: open('/portal/register') },
  { name: 'register-invalid', route: '/portal/register', status: 422, width: 1000, reach: sent('/portal/register', () => ({ Name: 'A', Email: 'not-an-address', Password: 'short' }), { noValidate: true }) },
  { name: 'forgot', route: '/portal/forgot', status: 200, width: 390, reach: open('/portal/forgot') },
  { name: 'forgot-sent', route: '/portal/forgot', status: 200, width: 1000, reach: sent('/portal/forgot', (demo) => ({ Email: demo.user.email })) },
  // the token sits in the fragment, which reaches no server: reset.js moves it into the form
  { name: 'reset', route: '/portal/reset', status: 200, width: 390, reach: open(RESET_LINK) },
  { name: 'reset-invalid-link', route: '/portal/reset', status: 400, width: 1000, reach: sent(RESET_LINK, () => ({ 'New password': NEW_PASSWORD })) },
  { name: 'logout', route: '/portal/logout', status: 200, width: 390, reach: signedIn(open('/portal/logout')) },
  // signed in without a return URL: PORTAL_DEFAULT_RETURN_URL, the account page
  { name: 'account', route: '/portal/account', status: 200, width: 1000, reach: signedIn() },
  {
    name: 'account-wrong-password',
    route: '/portal/account',
    status: 400,
    width: 1000,
    reach: signedIn(async (page) => await fill(page, { 'Current password': 'not-the-password', 'New password': NEW_PASSWORD }, { button: 'Change password' }))
  },
  {
    // enrolment started: the QR image of the pending factor, and the field for its first code
    name: 'account-totp-pending',
    route: '/portal/account',
    status: 200,
    width: 1000,
    reach: signedIn(async (page, demo) => await fill(page, { Password: demo.user.password }, { button: 'Set up two-factor sign-in' }))
  },
  // what /auth/verify links to when a signed-in person lacks a role an application asks for
  { name: 'forbidden', route: '/portal/forbidden', status: 403, width: 390, reach: signedIn(open('/portal/forbidden?reason=missing_role&roles=admin,editor&rd=%2Fadmin')) },
  { name: 'not-found', route: '/portal/*', status: 404, width: 1000, reach: open('/portal/no-such-page') },
  {
    // a form posted to a page that takes none (the sign-in page's form, pointed elsewhere)
    name: 'method-not-allowed',
    route: '/portal/login',
    status: 405,
    width: 1000,
    reach: async (page, demo) => {
      await page.goto(`${demo.origin}/portal/login`)
      await page.evaluate('document.querySelector("form").action = "/portal/forbidden"')
      return await fill(page, { Email: demo.user.email, Password: demo.user.password })
    }
  },
  {
    // passkeys.js fills the passkey form with a credential no authenticator made: the sign-in page again
    name: 'login-passkey-invalid',
    route: '/portal/login',
    status: 400,
    width: 390,
    reach: async (page, demo) => {
      await page.goto(`${demo.origin}/portal/login`)
      const forged = 'const form = document.querySelector("form[data-passkey]"); form.elements.challenge_id.value = "forged"; ' +
        'form.elements.credential.value = "{}"; form.elements.csrf.value = document.querySelector("input[name=csrf]").value; form.submit()'
      const [response] = await Promise.all([page.waitForNavigation(), page.evaluate(forged)])
      return response
    }
  },
  {
    // a passkey added with Chromium's virtual authenticator: the list, each name editable in place
    name: 'account-passkeys',
    route: '/portal/account',
    status: 200,
    width: 1000,
    reach: signedIn(async (page) => {
      await virtualAuthenticator(page)
      return await addPasskey(page, 'Work laptop')
    })
  },
  {
    // the TOTP user adds a passkey (signed in with a recovery code), then signs in again with the password
    name: 'two-factor-passkey',
    route: '/portal/2fa',
    status: 200,
    width: 390,
    reach: async (page, demo) => {
      const authenticator = await virtualAuthenticator(page)
      await signIn(page, demo, demo.totpUser, '', authenticator)
      await page.goto(`${demo.origin}/portal/2fa?use=recovery`)
      await fill(page, { 'Recovery code': demo.totpUser.recoveryCodes[0] ?? '' })
      await addPasskey(page, 'Phone')
      await page.context().clearCookies()
      return await signIn(page, demo, demo.totpUser, '', authenticator)
    }
  },
  {
    // signed in, an application that never receives the cookie sends the browser back: the fourth time is the loop page
    name: 'redirect-loop',
    route: '/portal/login',
    status: 508,
    width: 1000,
    reach: signedIn(async (page, demo) => {
      const bounce = `${demo.origin}/portal/login?rd=${encodeURIComponent(`${demo.appOrigin}/health`)}`
      for (let i = 0; i < 3; i++) await page.goto(bounce)
      return await page.goto(bounce)
    })
  }
]
