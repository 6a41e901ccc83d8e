import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build } from '../../helper.js'
import { TOTP_ON } from '../auth/two-factor/support.js'
import { latestMail, NEW_PASSWORD, recoveryApp, resetTokenIn } from '../auth/recovery/support.js'
import { idpValues } from '../api/identities-support.js'
import { CLIENT_SECRET, IdpBrowser, redirectUri } from '../../idp/support.js'
import { startUpstream, stopUpstream } from '../../idp/upstream.js'
import { PORTAL_ORIGIN } from './support.js'

/*
 * The account page of a user without a password (routes/portal/account/page.ts, account.eta): one
 * made by an identity provider's sign-up (the real oidc-provider upstream of test/idp). The change
 * form, whose current password they cannot give, is replaced by the way to add one (a reset link,
 * or an administrator), and the authenticator-app set-up, which asks for the password, says to add
 * one first. The same user after a reset through the real mail path sees both forms again.
 */

const upstream = await startUpstream([{ client_id: 'open', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri('open')] }])
t.teardown(async () => { await stopUpstream(upstream) })
const PROVIDER = { id: 'open', client_id: 'open', type: 'oidc', display_name: 'Open SSO', issuer: upstream.issuer, allow_signup: true }

const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`
const CHANGE_FORM = /<form method="post" action="[^"]*\/portal\/account\/change-password">/
const ENROL_FORM = /<form method="post" action="[^"]*\/portal\/account\/totp-enrol">/
const ADD_FIRST = '<p>Off. Two-factor sign-in with an authenticator app is set up with your password: add one first.</p>'

/** A browser signed up through the provider, on the account page. */
async function signedUp (app: FastifyInstance, sub: string, email: string): Promise<{ browser: IdpBrowser, page: string }> {
  upstream.script({ sub, email, email_verified: true, name: 'No Password' })
  const browser = new IdpBrowser(app)
  const { callback } = await browser.signIn('open', `?rd=${encodeURIComponent(ACCOUNT)}`)
  if (callback.statusCode !== 303) throw new Error(`sign-up: ${callback.statusCode}`)
  const page = await browser.get('/portal/account')
  if (page.statusCode !== 200) throw new Error(`account page: ${page.statusCode}`)
  return { browser, page: page.body }
}

t.test('with ENABLE_PASSWORD_RESET: the way to add a password instead of the change form; after the reset, both forms', async (t) => {
  const app = await recoveryApp(t, idpValues(t, { ...TOTP_ON, ENABLE_EMAIL_OTP: false, PASSWORD_RESET_URL: undefined }, [PROVIDER]))
  const { browser, page } = await signedUp(app, 'np-1', 'no.password@example.com')
  t.match((await app.store.users.findByEmail('no.password@example.com'))?.passwordHash, '', 'signed up without a password')
  t.match(page, '<h2>Password</h2>\n<p>None: you sign in with a passkey or a connected account. To add a password, ask for a reset link on the ' +
    `<a href="${PORTAL_ORIGIN}/portal/forgot">Forgot password</a> page; it is sent to no.password@example.com.</p>`)
  t.notMatch(page, CHANGE_FORM, 'no form whose current password they cannot give')
  t.match(page, ADD_FIRST)
  t.notMatch(page, ENROL_FORM)

  // the page's way, followed: the reset mail through the real SMTP path, a new password, the forms back
  t.equal((await browser.post('/portal/forgot', { email: 'no.password@example.com' })).statusCode, 303)
  const token = resetTokenIn((await latestMail(app, 'no.password@example.com')).text, `${PORTAL_ORIGIN}/portal/reset#token={token}`)
  t.equal((await browser.post('/portal/reset', { token, reset_link: '', new_password: NEW_PASSWORD })).statusCode, 303)
  const withPassword = new IdpBrowser(app)
  t.equal((await withPassword.post('/portal/login', { email: 'no.password@example.com', password: NEW_PASSWORD })).statusCode, 303)
  const after = (await withPassword.get('/portal/account')).body
  t.match(after, CHANGE_FORM, 'the negative control: with a password, the change form')
  t.match(after, ENROL_FORM)
  t.notMatch(after, 'None: you sign in with')
  t.notMatch(after, ADD_FIRST)
})

t.test('without ENABLE_PASSWORD_RESET: an administrator can set one', async (t) => {
  const app = await build(t, idpValues(t, TOTP_ON, [PROVIDER]))
  const { page } = await signedUp(app, 'np-2', 'admin.help@example.com')
  t.match(page, '<h2>Password</h2>\n<p>None: you sign in with a passkey or a connected account. An administrator can set a password for you.</p>')
  t.notMatch(page, CHANGE_FORM)
  t.notMatch(page, 'Forgot password')
  t.match(page, ADD_FIRST)
})
