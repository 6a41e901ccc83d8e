import t from 'tap'
import { claimsOf, createUser, setCookies } from '../../helper.js'
import { enrolledUser, oathtool, testClock, TOTP_ON } from '../auth/two-factor/support.js'
import { codeIn, latestMail, queued, recoveryApp } from '../auth/recovery/support.js'
import { auditRows, flowCookieOf, openFlow } from './steps-support.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, portalValues, PORTAL_ORIGIN } from './support.js'

const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`
const VERIFY = `${PORTAL_ORIGIN}/portal/code/verify`

t.test('GET /portal/code: the email form, the return URL carried along', async (t) => {
  const app = await recoveryApp(t, portalValues())
  const page = await new PageClient(app).get('/portal/code?rd=/portal/account%3Ftab%3D2')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Email me a code – gatehouse<\/title>/)
  t.match(page.body, /<input id="email" name="email" type="email" autocomplete="email" required autofocus aria-describedby="email-hint">/)
  t.equal(fieldValue(page.body, 'rd'), `${ACCOUNT}?tab=2`)
  t.match(page.body, `<a href="${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(`${ACCOUNT}?tab=2`)}">Sign in with a password</a>`)
})

t.test('POST /portal/code: the same 303 and flow cookie for every address; a mail only to an account', async (t) => {
  const app = await recoveryApp(t, portalValues())
  const user = await createUser(app, { email: 'code@example.com' })
  const answers = []
  for (const email of [user.email, 'nobody@example.com']) {
    const browser = new PageClient(app)
    const res = await browser.post('/portal/code', { email, rd: '/portal/account' })
    t.equal(res.statusCode, 303)
    t.equal(res.headers.location, VERIFY)
    t.equal(res.body, '')
    const flow = setCookies(res).find((c) => c.name === '__Host-gh_flow')
    t.strictSame(openFlow(app, flow?.value), { step: 'email_code', email, rd: ACCOUNT })
    answers.push({ status: res.statusCode, location: res.headers.location, cookies: setCookies(res).map((c) => [c.name, c.attributes]) })
  }
  t.strictSame(answers[0], answers[1], 'nothing tells the addresses apart')
  t.equal((await queued(app, user.email)).length, 1)
  t.equal((await queued(app, 'nobody@example.com')).length, 0)
  // the mail requests are handled after the answer, each in its own time: their rows come in either order
  const requested = (await auditRows(app, 'email_code_requested')).sort((a, b) => String(a.outcome).localeCompare(String(b.outcome)))
  t.match(requested, [{ outcome: 'failure', email: 'nobody@example.com', detail: 'login: unknown address' }, { outcome: 'success', userId: user.id, detail: 'login' }])

  const invalid = await new PageClient(app).post('/portal/code', { email: 'not-an-address' })
  t.equal(invalid.statusCode, 422)
  t.equal(alertCode(invalid.body), 'validation_failed')
  t.match(invalid.body, /<p class="field-error" id="email-error">/)
  t.equal(fieldValue(invalid.body, 'email'), 'not-an-address', 'the address is kept')
})

t.test('the mailed code signs in: 303 to the return URL, amr ["email"]; a wrong code is the page again with 400 invalid_otp', async (t) => {
  const app = await recoveryApp(t, portalValues())
  const user = await createUser(app, { email: 'code@example.com' })
  const browser = new PageClient(app)
  await browser.post('/portal/code', { email: user.email, rd: '/portal/account' })
  const page = await browser.get('/portal/code/verify')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<p>If an account exists for <strong>code@example.com<\/strong>, a mail with a six-digit code is on its way.<\/p>/)
  t.match(page.body, /<input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" required autofocus>/)
  t.match(page.body, `<a href="${PORTAL_ORIGIN}/portal/code?rd=${encodeURIComponent(ACCOUNT)}">Send another code</a>`)

  const code = codeIn((await latestMail(app, user.email)).text)
  const wrong = await browser.post('/portal/code/verify', { code: String((Number(code) + 1) % 1_000_000).padStart(6, '0') })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_otp')
  t.match(wrong.body, /code@example.com/, 'the same page again')
  t.notOk(browser.jar.has('access_token'))

  const right = await browser.post('/portal/code/verify', { code })
  t.equal(right.statusCode, 303)
  t.equal(right.headers.location, ACCOUNT)
  t.notOk(browser.jar.has('__Host-gh_flow'), 'the step is over')
  const claims = claimsOf(browser.jar.get('access_token') ?? '')
  t.equal(claims.user_id, user.id)
  t.strictSame([claims.aal, claims.amr], ['aal1', ['email']])
  t.match((await auditRows(app, 'email_code_failed')).at(-1), { outcome: 'failure', userId: user.id, detail: 'login' })
  t.match((await auditRows(app, 'login_succeeded')).at(-1), { userId: user.id, sessionId: claims.session_id, detail: 'portal' })

  const spent = await browser.post('/portal/code/verify', { code })
  t.equal(spent.statusCode, 303, 'no step any more: ask for an address again')
  t.equal(spent.headers.location, `${PORTAL_ORIGIN}/portal/code`)
})

t.test('a TOTP account: the code leads to /portal/2fa, oathtool\'s code finishes the sign-in', async (t) => {
  const clock = testClock()
  const app = Object.assign(await recoveryApp(t, portalValues(TOTP_ON), undefined, { clock: clock.clock }), { testClock: clock })
  const user = await enrolledUser(app, { email: 'totp@example.com' })
  const browser = new PageClient(app)
  await browser.post('/portal/code', { email: user.email, rd: '/portal/account' })
  const code = codeIn((await latestMail(app, user.email)).text)
  const first = await browser.post('/portal/code/verify', { code })
  t.equal(first.statusCode, 303)
  t.equal(first.headers.location, `${PORTAL_ORIGIN}/portal/2fa`)
  t.match(openFlow(app, browser.jar.get('__Host-gh_flow')), { step: 'second_factor', rd: ACCOUNT, mfaToken: /^[A-Za-z0-9_-]{43}$/ })
  t.notOk(browser.jar.has('access_token'), 'not signed in yet')
  const done = await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, ACCOUNT)
  const claims = claimsOf(browser.jar.get('access_token') ?? '')
  t.equal(claims.aal, 'aal2')
  t.match((await auditRows(app, 'mfa_challenge_issued')).at(-1), { userId: user.id, detail: 'email' })
})

t.test('/portal/code/verify without a pending address (none, forged, expired): 303 /portal/code', async (t) => {
  const app = await recoveryApp(t, portalValues())
  const browser = new PageClient(app)
  const none = await browser.get('/portal/code/verify')
  t.equal(none.statusCode, 303)
  t.equal(none.headers.location, `${PORTAL_ORIGIN}/portal/code`)
  const posted = await browser.post('/portal/code/verify', { code: '123456' })
  t.equal(posted.statusCode, 303)
  t.equal(posted.headers.location, `${PORTAL_ORIGIN}/portal/code`)

  const step = { step: 'email_code' as const, email: 'a@example.com', rd: ACCOUNT }
  browser.jar.set('__Host-gh_flow', flowCookieOf(app, () => Date.now() - 700_000).seal(step, 600))
  t.equal((await browser.get('/portal/code/verify')).statusCode, 303, 'expired')
  browser.jar.set('__Host-gh_flow', `${flowCookieOf(app).seal(step, 600)}x`)
  t.equal((await browser.get('/portal/code/verify')).statusCode, 303, 'forged')
  browser.jar.set('__Host-gh_flow', flowCookieOf(app).seal(step, 600))
  t.equal((await browser.get('/portal/code/verify')).statusCode, 200, 'the negative control: the same step, sealed now')
})

t.test('with ENABLE_EMAIL_OTP off, /portal/code and /portal/code/verify do not exist (404 pages)', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  for (const url of ['/portal/code', '/portal/code/verify']) {
    const res = await browser.get(url)
    t.equal(res.statusCode, 404, url)
    t.equal(alertCode(res.body), 'not_found')
  }
  const login = await browser.get('/portal/login')
  t.notMatch(login.body, /Email me a code/, 'and the sign-in page offers none')
})

t.test('the code page, and the page shown again after a wrong code, let the form land on a return URL of another origin', async (t) => {
  const app = await recoveryApp(t, portalValues({ COOKIE_DOMAIN: 'gh.localhost' }))
  const browser = new PageClient(app)
  await browser.post('/portal/code', { email: 'someone@example.com', rd: 'https://app.gh.localhost/x' })
  const formAction = /; form-action 'self' https:\/\/app.gh.localhost$/
  t.match((await browser.get('/portal/code/verify')).headers['content-security-policy'], formAction)
  const wrong = await browser.post('/portal/code/verify', { code: '000000' })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.headers['content-security-policy'], formAction)
})

t.test('POST /portal/code spends the MAIL_RATE_LIMIT budget that POST /auth/send-otp spends: the 429 page with Retry-After', async (t) => {
  const app = await recoveryApp(t, portalValues({ MAIL_RATE_LIMIT: '2/h' }))
  const browser = new PageClient(app)
  t.equal((await browser.post('/portal/code', { email: 'a@example.com' })).statusCode, 303)
  const json = await app.inject({ method: 'POST', url: '/auth/send-otp', payload: { email: 'a@example.com', purpose: 'login' } })
  t.equal(json.statusCode, 202)
  const limited = await browser.post('/portal/code', { email: 'a@example.com' })
  t.equal(limited.statusCode, 429)
  t.equal(alertCode(limited.body), 'rate_limited')
  t.match(limited.headers['retry-after'], /^\d+$/)
  t.match(limited.body, /name="email"/, 'the form again')
})
