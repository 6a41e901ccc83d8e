import t from 'tap'
import { claimsOf, createUser } from '../../helper.js'
import { enrolledUser, oathtool } from '../auth/two-factor/support.js'
import { ceremony } from '../passkeys/support.js'
import { postAssertion, PORTAL_PASSKEYS, withPasskey } from './passkey-support.js'
import { auditRows, openFlow, totpPortalApp } from './steps-support.js'
import { alertCode, fieldValue, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

/*
 * The passkey ceremonies through the portal's forms (routes/portal/passkey.ts,
 * routes/portal/two-factor.ts) over inject, with the software authenticator of the passkey suites
 * standing in for the browser (Chromium's own run: test/browser/passkeys.test.ts): the sign-in
 * page's assertion, the second step's, and what each answers.
 */

const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`

/** The options the two-factor page carries in its passkey form's data-options (an attribute, HTML-escaped). */
function pageOptions (html: string): { challengeId?: string, options?: { challenge: string, allowCredentials?: Array<{ id: string }> } } {
  const form = /<form method="post" action="\/portal\/2fa" class="passkey" data-passkey="second-factor" data-options="([^"]*)" hidden>([\s\S]*?)<\/form>/.exec(html)
  if (form === null) return {}
  const json = (form[1] ?? '').replaceAll('&quot;', '"').replaceAll('&#39;', '\'').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
  return { challengeId: fieldValue(form[2] ?? '', 'challenge_id'), options: JSON.parse(json) }
}

t.test('an assertion posted by the sign-in page: 303 to the return URL with the portal\'s cookies at aal2; a refused return URL goes to the default', async (t) => {
  const app = await portalApp(t, PORTAL_PASSKEYS)
  const user = await createUser(app)
  const authenticator = await withPasskey(app, user)
  // the control: a password sign-in through the same portal is audited with detail portal
  t.equal((await new PageClient(app).post('/portal/login', { email: user.email, password: user.password })).statusCode, 303)
  const browser = new PageClient(app)
  const rd = `${PORTAL_ORIGIN}/auth/me`
  const res = await postAssertion(browser, app, authenticator, rd)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, rd)
  t.same([...browser.jar.keys()].sort(), ['__Host-gh_csrf', '__Host-refresh_token', 'access_token'])
  t.match(claimsOf(browser.jar.get('access_token') ?? ''), { user_id: user.id, aal: 'aal2', amr: ['pop', 'mfa'] })
  const me = await browser.get('/auth/me')
  t.match(me.json(), { email: user.email })
  // (the first row is the JSON password sign-in that registered the passkey)
  t.strictSame((await auditRows(app, 'login_succeeded')).map((r) => [r.userId, r.detail]), [[user.id, null], [user.id, 'portal'], [user.id, 'passkey']],
    'a passkey sign-in says passkey through the portal too; the portal\'s password sign-in says portal')

  const other = new PageClient(app)
  const refused = await postAssertion(other, app, authenticator, 'https://evil.example/')
  t.equal(refused.statusCode, 303)
  t.equal(refused.headers.location, ACCOUNT, 'PORTAL_DEFAULT_RETURN_URL instead')
  // the negative control: the same assertion again (its challenge spent) signs nobody in
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  const credential = JSON.stringify(authenticator.get(options))
  t.equal((await other.post('/portal/passkey', { challenge_id: challengeId, credential })).statusCode, 303)
  const replay = await new PageClient(app).post('/portal/passkey', { challenge_id: challengeId, credential })
  t.equal(replay.statusCode, 400)
  t.equal(alertCode(replay.body), 'passkey_invalid')
})

t.test('PASSKEY_SATISFIES_MFA=false, a TOTP user: 303 /portal/2fa, the mfa_token only in the flow cookie, the passkey not offered again', async (t) => {
  const app = await totpPortalApp(t, { ...PORTAL_PASSKEYS, PASSKEY_SATISFIES_MFA: false })
  const user = await enrolledUser(app)
  const authenticator = await withPasskey(app, user, user.access_token)
  const browser = new PageClient(app)
  const res = await postAssertion(browser, app, authenticator, '/auth/me')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  t.notOk(browser.jar.has('access_token'))
  const step = openFlow(app, browser.jar.get('__Host-gh_flow'))
  t.match(step, { step: 'second_factor', mfaToken: /.+/, rd: `${PORTAL_ORIGIN}/auth/me` })
  t.notOk(step !== undefined && 'webauthn' in step, 'no passkey as the second factor after a passkey')
  const page = await browser.get('/portal/2fa')
  t.equal(page.statusCode, 200)
  t.same(pageOptions(page.body), {}, 'no passkey form')
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, `${PORTAL_ORIGIN}/auth/me`)
  t.match(claimsOf(browser.jar.get('access_token') ?? ''), { aal: 'aal2', amr: ['pop', 'otp', 'mfa'] })
})

t.test('the second step with a passkey: the page carries that user\'s request options, the assertion posted to /portal/2fa signs in at aal2 (pwd, pop)', async (t) => {
  const app = await totpPortalApp(t, PORTAL_PASSKEYS)
  const user = await enrolledUser(app)
  const before = new PageClient(app)
  t.equal((await before.post('/portal/login', { email: user.email, password: user.password })).headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  t.same(pageOptions((await before.get('/portal/2fa')).body), {}, 'no passkey yet: only the code')

  const authenticator = await withPasskey(app, user, user.access_token)
  const passkeyId = authenticator.credentials[0]?.id.toString('base64url')
  const browser = new PageClient(app)
  const rd = `${PORTAL_ORIGIN}/auth/me`
  t.equal((await browser.post('/portal/login', { email: user.email, password: user.password, rd })).headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  t.match(openFlow(app, browser.jar.get('__Host-gh_flow')), { step: 'second_factor', webauthn: true })
  const page = await browser.get('/portal/2fa')
  t.equal(page.statusCode, 200)
  const { challengeId, options } = pageOptions(page.body)
  t.match(options, { rpId: 'gh.localhost', allowCredentials: [{ id: passkeyId, type: 'public-key' }] }, 'this user\'s passkey, named')
  t.match(page.body, /<script src="[^"]+\/portal\/assets\/passkeys\.[0-9a-f]{10}\.js" defer><\/script>/)
  t.notMatch(page.body, 'mfa_token', 'the token stays in the flow cookie')

  const credential = JSON.stringify(authenticator.get(options ?? { challenge: '' }))
  const both = await browser.post('/portal/2fa', { challenge_id: challengeId ?? '', credential, code: '123456' })
  t.equal(both.statusCode, 422, 'one proof, not two')
  const wrong = await browser.post('/portal/2fa', { challenge_id: challengeId ?? '', credential: '{}' })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'passkey_invalid')
  t.match(wrong.body, '<h1>Two-factor sign-in</h1>', 'the two-factor page again')
  t.ok(pageOptions(wrong.body).challengeId, 'with a passkey form of its own')

  const again = await browser.get('/portal/2fa')
  const next = pageOptions(again.body)
  const res = await browser.post('/portal/2fa', { challenge_id: next.challengeId ?? '', credential: JSON.stringify(authenticator.get(next.options ?? { challenge: '' })) })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, rd)
  t.match(claimsOf(browser.jar.get('access_token') ?? ''), { user_id: user.id, aal: 'aal2', amr: ['pwd', 'pop', 'mfa'] })
  t.notOk(browser.jar.has('__Host-gh_flow'), 'the pending step is over')
  t.match((await auditRows(app, 'login_succeeded')).at(-1), { userId: user.id, detail: 'passkey' }, 'the passkey as second factor says passkey too')
})

t.test('with passkeys off the two-factor form takes no credential (422, as before)', async (t) => {
  const app = await totpPortalApp(t)
  const user = await enrolledUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/login', { email: user.email, password: user.password })
  const res = await browser.post('/portal/2fa', { challenge_id: 'x', credential: '{}' })
  t.equal(res.statusCode, 422)
  t.equal(alertCode(res.body), 'validation_failed')
})
