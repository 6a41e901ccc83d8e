import t from 'tap'
import { claimsOf, createUser, setCookies } from '../../helper.js'
import { enrolledUser, oathtool } from '../auth/two-factor/support.js'
import { auditRows, flowCookieOf, openFlow, totpPortalApp } from './steps-support.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

const LOGIN = `${PORTAL_ORIGIN}/portal/login`
const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`

/** A browser that signed in with the password of a TOTP user and now stands at the second step. */
async function atSecondStep (app: Awaited<ReturnType<typeof totpPortalApp>>, rd = '/portal/account') {
  const user = await enrolledUser(app)
  const browser = new PageClient(app)
  const first = await browser.post('/portal/login', { email: user.email, password: user.password, rd })
  return { user, browser, first }
}

t.test('a password sign-in of a TOTP user: 303 /portal/2fa, the mfa_token only in the sealed flow cookie', async (t) => {
  const app = await totpPortalApp(t)
  const { browser, first } = await atSecondStep(app)
  t.equal(first.statusCode, 303)
  t.equal(first.headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  const flow = setCookies(first).find((c) => c.name === '__Host-gh_flow')
  t.strictSame(flow?.attributes, { 'max-age': '300', path: '/', httponly: true, secure: true, samesite: 'Lax' })
  t.notOk(browser.jar.has('access_token'), 'not signed in yet')
  const step = openFlow(app, flow?.value)
  t.match(step, { step: 'second_factor', rd: ACCOUNT, mfaToken: /^[A-Za-z0-9_-]{43}$/ })
  const mfaToken = step?.step === 'second_factor' ? step.mfaToken : 'none'
  t.notOk(first.headers.location?.includes(mfaToken), 'not in the URL')
  t.notOk(flow?.value.includes(mfaToken), 'not readable in the cookie')

  const page = await browser.get('/portal/2fa')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Two-factor sign-in – gatehouse<\/title>/)
  t.match(page.body, /<input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" required autofocus aria-describedby="code-hint">/)
  t.match(page.body, /<label for="code">Code<\/label>/)
  t.match(page.body, /<a href="\/portal\/2fa\?use=recovery">Use a recovery code<\/a>/)
  t.notOk(page.body.includes(mfaToken), 'not in the page')
  t.equal(fieldValue(page.body, 'csrf'), browser.jar.get('__Host-gh_csrf'))
})

t.test('POST /portal/2fa with oathtool\'s code: signed in at aal2, 303 to the return URL, the flow cleared, audited as the JSON route audits it', async (t) => {
  const app = await totpPortalApp(t)
  const { user, browser } = await atSecondStep(app)
  const wrong = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) === '000000' ? '111111' : '000000' })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_otp')
  t.match(wrong.body, /The code is invalid or has expired/)
  t.match(wrong.body, /name="code"/, 'the same page again')
  t.ok(browser.jar.has('__Host-gh_flow'), 'the step stays for another try')

  const right = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(right.statusCode, 303)
  t.equal(right.headers.location, ACCOUNT)
  const cookies = Object.fromEntries(setCookies(right).map((c) => [c.name, c]))
  t.equal(cookies['__Host-gh_flow']?.value, '', 'the flow cookie is cleared')
  t.ok(cookies['__Host-refresh_token']?.value)
  const claims = claimsOf(browser.jar.get('access_token') ?? '')
  t.equal(claims.user_id, user.id)
  t.equal(claims.aal, 'aal2')
  t.strictSame(claims.amr, ['pwd', 'otp', 'mfa'])

  const failed = await auditRows(app, 'totp_failed')
  t.match(failed.at(-1), { outcome: 'failure', userId: user.id, detail: 'wrong code' })
  const succeeded = await auditRows(app, 'login_succeeded')
  t.match(succeeded.at(-1), { outcome: 'success', userId: user.id, sessionId: claims.session_id, detail: 'portal' }, 'a portal sign-in says so; the method is in the amr')
  const challenge = await auditRows(app, 'mfa_challenge_issued')
  t.match(challenge.at(-1), { userId: user.id, detail: 'pwd' })

  const after = await browser.get('/portal/2fa')
  t.equal(after.statusCode, 303, 'the step is over')
  t.equal(after.headers.location, LOGIN)
})

t.test('a recovery code, through the link that swaps the field (no JavaScript); each works once', async (t) => {
  const app = await totpPortalApp(t)
  const { user, browser } = await atSecondStep(app, 'https://auth.gh.localhost/portal/account?tab=1')
  const page = await browser.get('/portal/2fa?use=recovery')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" required autofocus aria-describedby="recovery_code-hint">/)
  t.notMatch(page.body, /name="code"/)
  t.match(page.body, /<a href="\/portal\/2fa">Use your authenticator app<\/a>/)
  const code = user.recoveryCodes[0] ?? ''
  const done = await browser.post('/portal/2fa', { recovery_code: code })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, 'https://auth.gh.localhost/portal/account?tab=1')

  const again = new PageClient(app)
  await again.post('/portal/login', { email: user.email, password: user.password })
  const spent = await again.post('/portal/2fa', { recovery_code: code })
  t.equal(spent.statusCode, 400)
  t.equal(alertCode(spent.body), 'invalid_otp')
  t.match(spent.body, /name="recovery_code"/, 'the recovery field again')
})

t.test('exactly one of code and recovery_code, as POST /auth/verify-2fa: 422 beside the field', async (t) => {
  const app = await totpPortalApp(t)
  const { user, browser } = await atSecondStep(app)
  const neither = await browser.post('/portal/2fa', {})
  t.equal(neither.statusCode, 422)
  t.equal(alertCode(neither.body), 'validation_failed')
  t.match(neither.body, /<p class="field-error" id="code-error">Exactly one of code and recovery_code is required<\/p>/)
  t.match(neither.body, /aria-describedby="code-hint code-error"/)
  const both = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now), recovery_code: user.recoveryCodes[0] ?? '' })
  t.equal(both.statusCode, 422)
  t.match(both.body, /id="recovery_code-error">Exactly one of code and recovery_code is required/)
})

t.test('no step, a tampered or an expired flow cookie: 303 /portal/login, GET and POST alike', async (t) => {
  const app = await totpPortalApp(t)
  const none = new PageClient(app)
  const get = await none.get('/portal/2fa')
  t.equal(get.statusCode, 303)
  t.equal(get.headers.location, LOGIN)
  t.equal(get.body, '')
  const post = await none.post('/portal/2fa', { code: '123456' })
  t.equal(post.statusCode, 303)
  t.equal(post.headers.location, LOGIN)

  const { user, browser } = await atSecondStep(app)
  const sealed = browser.jar.get('__Host-gh_flow') ?? ''
  const last = sealed.at(-2) === 'A' ? 'B' : 'A'
  browser.jar.set('__Host-gh_flow', `${sealed.slice(0, -2)}${last}${sealed.slice(-1)}`)
  const tampered = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(tampered.statusCode, 303)
  t.equal(tampered.headers.location, LOGIN)
  t.notOk(browser.jar.has('access_token'))

  // the real key and a real challenge, sealed six minutes ago for five minutes
  const step = openFlow(app, sealed)
  if (step === undefined) throw new Error('the untouched cookie opens')
  const past = flowCookieOf(app, () => Date.now() - 360_000).seal(step, 300)
  browser.jar.set('__Host-gh_flow', past)
  const expired = await browser.get('/portal/2fa')
  t.equal(expired.statusCode, 303)
  t.equal(expired.headers.location, LOGIN)
  // the negative control: the same step sealed now is taken
  browser.jar.set('__Host-gh_flow', flowCookieOf(app).seal(step, 300))
  t.equal((await browser.get('/portal/2fa')).statusCode, 200)
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, ACCOUNT)
})

t.test('an email-code step is not a second factor: 303 /portal/login', async (t) => {
  const app = await totpPortalApp(t)
  const browser = new PageClient(app)
  browser.jar.set('__Host-gh_flow', flowCookieOf(app).seal({ step: 'email_code', email: 'a@example.com', rd: ACCOUNT }, 300))
  const res = await browser.get('/portal/2fa')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, LOGIN)
})

t.test('with ENABLE_TOTP off, /portal/2fa does not exist (404 page)', async (t) => {
  const app = await portalApp(t)
  await createUser(app)
  const res = await new PageClient(app).get('/portal/2fa')
  t.equal(res.statusCode, 404)
  t.equal(alertCode(res.body), 'not_found')
})

t.test('the page, and the page shown again after a wrong code, let the form land on a return URL of another origin', async (t) => {
  const app = await totpPortalApp(t, { COOKIE_DOMAIN: 'gh.localhost' })
  const { browser } = await atSecondStep(app, 'https://app.gh.localhost/x')
  const formAction = /; form-action 'self' https:\/\/app.gh.localhost$/
  t.match((await browser.get('/portal/2fa')).headers['content-security-policy'], formAction)
  const wrong = await browser.post('/portal/2fa', { code: '12345678' })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.headers['content-security-policy'], formAction, 'CSP form-action applies to the redirect after the next try')
  const invalid = await browser.post('/portal/2fa', {})
  t.equal(invalid.statusCode, 422)
  t.match(invalid.headers['content-security-policy'], formAction)
  // the control: a same-origin return URL keeps form-action 'self' alone
  const { browser: local } = await atSecondStep(app, '/portal/account')
  t.equal((await local.post('/portal/2fa', { code: '12345678' })).headers['content-security-policy'], PAGE_HEADERS['content-security-policy'])
})

t.test('the sign-in pages spend the LOGIN_RATE_LIMIT budget of the JSON sign-in routes', async (t) => {
  const app = await totpPortalApp(t, { LOGIN_RATE_LIMIT: '4/m' })
  const { browser, first } = await atSecondStep(app)
  // enrolment spent three (login, enable-2fa, verify-2fa), the portal sign-in the fourth and last
  t.equal(first.statusCode, 303, 'within the budget')
  const limited = await browser.post('/portal/2fa', { code: '000000' })
  t.equal(limited.statusCode, 429)
  t.equal(alertCode(limited.body), 'rate_limited')
  t.match(limited.headers['retry-after'], /^\d+$/)
  const json = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'x@example.com', password: 'whatever-1' } })
  t.equal(json.statusCode, 429, 'one budget with the JSON routes')
})
