import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { authHeader, createUser, login, PASSWORD, type TestContext } from '../../helper.js'
import { delivered, latestMail, NEW_PASSWORD, queued, recoveryApp, resetTokenIn } from '../auth/recovery/support.js'
import { enrolledUser, oathtool, testClock, TOTP_ON } from '../auth/two-factor/support.js'
import { axeViolations, launchChromium, listeningPortal, pageProblems } from './chromium.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalValues, PORTAL_ORIGIN } from './support.js'

// PASSWORD_RESET_URL left unset: with the portal on it defaults to the portal's reset page
const RESET_LINK = `${PORTAL_ORIGIN}/portal/reset#token={token}`
const SENT = 'If an account exists for this address, a link to reset its password was sent. It works once, for a limited time.'

async function portalRecoveryApp (t: TestContext, values: Record<string, unknown> = {}, clock?: ReturnType<typeof testClock>): Promise<FastifyInstance> {
  return await recoveryApp(t, portalValues({ ENABLE_EMAIL_OTP: false, PASSWORD_RESET_URL: undefined, ...values }), undefined, clock === undefined ? {} : { clock: clock.clock })
}

function fieldError (html: string, name: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)?.[1]
}

/** The link of the latest reset mail to `email`, as the mail carries it. */
async function mailedLink (app: FastifyInstance, email: string, template = RESET_LINK): Promise<{ link: string, token: string }> {
  const token = resetTokenIn((await latestMail(app, email)).text, template)
  return { link: template.replace('{token}', token), token }
}

t.test('POST /portal/forgot: one 303 for a known and an unknown address; only the known one gets the mail, which links to the portal', async (t) => {
  const app = await portalRecoveryApp(t)
  const user = await createUser(app, { email: 'ann@example.com' })
  const browser = new PageClient(app)
  const page = await browser.get('/portal/forgot')
  t.equal(page.statusCode, 200)
  t.match(page.headers, PAGE_HEADERS)
  t.match(page.body, /<input id="email" name="email" type="email" autocomplete="email" required autofocus>/)

  const known = await browser.post('/portal/forgot', { email: 'Ann@Example.com' })
  const unknown = await browser.post('/portal/forgot', { email: 'nobody@example.com' })
  for (const res of [known, unknown]) {
    t.equal(res.statusCode, 303)
    t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/forgot?sent=1`)
    t.equal(res.body, '')
  }
  // the same headers too, but the date and the count of the per-address limit (one more request)
  const { date: _a, 'ratelimit-remaining': _c, ...knownHeaders } = known.headers
  const { date: _b, 'ratelimit-remaining': _d, ...unknownHeaders } = unknown.headers
  t.strictSame(knownHeaders, unknownHeaders, 'the same headers')
  t.same((await queued(app)).map((mail) => mail.to), [user.email], 'one mail, to the account')
  const mail = await delivered(app, user.email, 1)
  t.match(mail.text, `${PORTAL_ORIGIN}/portal/reset#token=`)

  const sent = await browser.get('/portal/forgot?sent=1')
  t.equal(sent.statusCode, 200)
  t.match(sent.body, `<p class="notice" role="status">${SENT}</p>`)
})

t.test('POST /portal/forgot: 422 beside the field; the mail limit of POST /auth/forgot-password, shared, then 429', async (t) => {
  const app = await portalRecoveryApp(t, { MAIL_RATE_LIMIT: '2/h' })
  const browser = new PageClient(app)
  const bad = await browser.post('/portal/forgot', { email: 'nope' })
  t.equal(bad.statusCode, 422)
  t.equal(alertCode(bad.body), 'validation_failed')
  t.equal(fieldError(bad.body, 'email'), 'The email field must be a valid email address')
  t.equal(fieldValue(bad.body, 'email'), 'nope')
  t.equal((await app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: 'a@example.com' } })).statusCode, 202, 'the second of two')
  const limited = await browser.post('/portal/forgot', { email: 'b@example.com' })
  t.equal(limited.statusCode, 429)
  t.equal(alertCode(limited.body), 'rate_limited')
  t.ok(Number(limited.headers['retry-after']) > 0)
  const other = await portalRecoveryApp(t, { MAIL_RATE_LIMIT: '2/h' })
  t.equal((await new PageClient(other).post('/portal/forgot', { email: 'b@example.com' })).statusCode, 303, 'the negative control: below the limit it passes')
})

t.test('GET /portal/reset: reset.js (served) fills the hidden token; without JavaScript a "Reset link" field takes the link', async (t) => {
  const app = await portalRecoveryApp(t)
  const browser = new PageClient(app)
  const page = await browser.get('/portal/reset')
  t.equal(page.statusCode, 200)
  t.match(page.headers, PAGE_HEADERS)
  const script = /<script src="http:\/\/auth\.gh\.localhost(\/portal\/assets\/reset\.[0-9a-f]{10}\.js)" defer><\/script>/.exec(page.body)?.[1]
  t.ok(script, 'the script, hash-named, deferred')
  const js = await browser.get(script ?? '')
  t.equal(js.statusCode, 200)
  t.match(js.headers['content-type'], /^(text|application)\/javascript/)
  t.match(js.body, 'history.replaceState')
  t.match(page.body, /<input type="hidden" name="token" value="">/)
  t.match(page.body, /<noscript>\s*<div class="field">\s*<label for="reset_link">Reset link<\/label>/)
  t.match(page.body, /<input id="new_password" name="new_password" type="password" autocomplete="new-password"/)
  t.notMatch(page.body, /name="code"/, 'no code field without ENABLE_TOTP')
  t.notMatch(page.body, /<script>|<style|style=/, 'no inline script or style')
})

t.test('POST /portal/reset with the token (as reset.js sends it): 303 to the sign-in page, every session over, the new password works, the token spent', async (t) => {
  const app = await portalRecoveryApp(t)
  const user = await createUser(app)
  const session = await login(app, user)
  const browser = new PageClient(app)
  await browser.post('/portal/forgot', { email: user.email })
  const { token } = await mailedLink(app, user.email)

  const res = await browser.post('/portal/reset', { token, reset_link: '', new_password: NEW_PASSWORD })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/login?done=reset`)
  t.notOk(browser.jar.has('access_token'), 'nobody is signed in')
  t.equal((await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(session.access_token) })).statusCode, 401, 'the old session is over')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: NEW_PASSWORD } })).statusCode, 200)
  const done = await browser.get('/portal/login?done=reset')
  t.match(done.body, 'Your password was changed. Sign in with the new one.')

  const again = await browser.post('/portal/reset', { token, new_password: 'Another-Secret-77' })
  t.equal(again.statusCode, 400, 'single use: the JSON route\'s 400')
  t.equal(alertCode(again.body), 'invalid_reset_token')
  t.match(again.body, 'The reset link is invalid or has expired')
  t.match(again.body, /<a href="http:\/\/auth\.gh\.localhost\/portal\/forgot">Ask for a new link<\/a>/)
})

t.test('without JavaScript: the pasted link, or the bare token, is read by the server', async (t) => {
  const app = await portalRecoveryApp(t)
  const browser = new PageClient(app)
  for (const [n, paste] of [[1, 'link'], [2, 'token']] as const) {
    const user = await createUser(app)
    await browser.post('/portal/forgot', { email: user.email })
    const { link, token } = await mailedLink(app, user.email)
    const res = await browser.post('/portal/reset', { token: '', reset_link: paste === 'link' ? ` ${link} ` : token, new_password: NEW_PASSWORD })
    t.equal(res.statusCode, 303, `${n}: the ${paste}`)
    t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: NEW_PASSWORD } })).statusCode, 200)
  }
  const none = await browser.post('/portal/reset', { token: '', reset_link: `${PORTAL_ORIGIN}/portal/reset`, new_password: NEW_PASSWORD })
  t.equal(none.statusCode, 422, 'a link without its token')
  t.equal(fieldError(none.body, 'reset_link'), 'The reset_link field is required')
  t.notMatch(none.body, /<noscript>/, 'the field shows outside <noscript>, so its message is seen')
  const wrong = await browser.post('/portal/reset', { token: '', reset_link: `${PORTAL_ORIGIN}/portal/reset#token=${'A'.repeat(43)}`, new_password: NEW_PASSWORD })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_reset_token')
})

t.test('POST /portal/reset: 422 beside the field keeps the token in the form, so the next try works', async (t) => {
  const app = await portalRecoveryApp(t)
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/forgot', { email: user.email })
  const { link } = await mailedLink(app, user.email)
  const short = await browser.post('/portal/reset', { token: '', reset_link: link, new_password: 'short' })
  t.equal(short.statusCode, 422)
  t.equal(fieldError(short.body, 'new_password'), 'The new_password field must be at least 8 characters')
  const kept = fieldValue(short.body, 'token')
  t.ok(kept !== undefined && kept !== '', 'the token the link carried is in the hidden field')
  t.notMatch(short.body, /reset_link/, 'so no link is asked for again')
  t.equal((await browser.post('/portal/reset', { token: kept ?? '', new_password: NEW_PASSWORD })).statusCode, 303)
})

t.test('an account with TOTP: without its code 403 mfa_required on the code field, the token survives; with oathtool\'s code, reset', async (t) => {
  const clock = testClock()
  const app = await portalRecoveryApp(t, TOTP_ON, clock)
  const user = await enrolledUser(Object.assign(app, { testClock: clock }))
  const browser = new PageClient(app)
  const form = await browser.get('/portal/reset')
  t.match(form.body, /<input id="code" name="code" type="text" autocomplete="one-time-code" aria-describedby="code-hint">/)
  await browser.post('/portal/forgot', { email: user.email })
  const { token } = await mailedLink(app, user.email)

  const missing = await browser.post('/portal/reset', { token, new_password: NEW_PASSWORD, code: '' })
  t.equal(missing.statusCode, 403)
  t.equal(alertCode(missing.body), 'mfa_required')
  t.equal(fieldError(missing.body, 'code'), 'A second factor is required')
  t.match(missing.body, /<input id="code"[^>]* aria-invalid="true" aria-describedby="code-hint code-error">/)
  const wrong = await browser.post('/portal/reset', { token, new_password: NEW_PASSWORD, code: oathtool(user.secret, clock.now + 300_000) })
  t.equal(wrong.statusCode, 403, 'a wrong code too')

  const right = await browser.post('/portal/reset', { token: fieldValue(wrong.body, 'token') ?? '', new_password: NEW_PASSWORD, code: oathtool(user.secret, clock.now) })
  t.equal(right.statusCode, 303)
  t.equal(right.headers.location, `${PORTAL_ORIGIN}/portal/login?done=reset`)
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: NEW_PASSWORD } })).statusCode, 403, 'the new password, then the second factor')
})

t.test('a forged reset is a 403 csrf_rejected page and changes nothing; with ENABLE_PASSWORD_RESET off the pages do not exist', async (t) => {
  const app = await portalRecoveryApp(t)
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/forgot', { email: user.email })
  const { token } = await mailedLink(app, user.email)
  const forged = await browser.post('/portal/reset', { token, new_password: NEW_PASSWORD }, { origin: 'http://evil.localhost' })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const forgedForgot = await browser.post('/portal/forgot', { email: user.email, csrf: 'x'.repeat(43) })
  t.equal(forgedForgot.statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: PASSWORD } })).statusCode, 200, 'the password is unchanged')
  t.equal((await browser.post('/portal/reset', { token, new_password: NEW_PASSWORD })).statusCode, 303, 'the negative control: the same form, same origin')

  const off = new PageClient(await recoveryApp(t, portalValues({ ENABLE_PASSWORD_RESET: false, ENABLE_EMAIL_OTP: false })))
  for (const path of ['/portal/forgot', '/portal/reset']) {
    const res = await off.get(path)
    t.equal(res.statusCode, 404, path)
    t.equal(alertCode(res.body), 'not_found')
  }
  t.notMatch((await off.get('/portal/login')).body, /forgot/)
})

t.test('in Chromium: reset.js moves the token into the form and out of the address bar; without JavaScript the pasted link works; axe finds nothing serious', async (t) => {
  const { app, origin } = await listeningPortal(t, {}, portalRecoveryApp)
  const template = `${origin}/portal/reset#token={token}`
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  const problems = pageProblems(page)

  const user = await createUser(app)
  await page.goto(`${origin}/portal/forgot`)
  t.same(await axeViolations(page), [], 'the forgot page')
  await page.fill('#email', user.email)
  await Promise.all([page.waitForURL(`${origin}/portal/forgot?sent=1`), page.click('button[type=submit]')])
  t.equal(await page.textContent('.notice'), SENT)
  const { link, token } = await mailedLink(app, user.email, template)

  await page.goto(link)
  t.equal(page.url(), `${origin}/portal/reset`, 'the token left the address bar')
  t.equal(await page.inputValue('input[name=token]'), token, 'and is in the form')
  t.equal(await page.isVisible('#reset_link'), false, 'no link is asked for')
  t.same(await axeViolations(page), [], 'the reset page')
  await page.fill('#new_password', 'short')
  await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')])
  t.equal(await page.textContent('#new_password-error'), 'The new_password field must be at least 8 characters')
  t.same(await axeViolations(page), [], 'the reset page with its error')
  await page.fill('#new_password', NEW_PASSWORD)
  await Promise.all([page.waitForURL(`${origin}/portal/login?done=reset`), page.click('button[type=submit]')])
  t.equal(await page.textContent('.notice'), 'Your password was changed. Sign in with the new one.')
  t.same(problems, [], 'no script error, no CSP violation')

  // without JavaScript: the fragment stays where it is, and the pasted link carries it
  const other = await createUser(app)
  await app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: other.email } })
  const mailed = await mailedLink(app, other.email, template)
  const plain = await (await browser.newContext({ javaScriptEnabled: false })).newPage()
  await plain.goto(mailed.link)
  t.equal(plain.url(), mailed.link, 'nothing moved it')
  t.equal(await plain.inputValue('input[name=token]'), '')
  t.equal(await plain.isVisible('#reset_link'), true, 'the "Reset link" field shows')
  await plain.fill('#reset_link', mailed.link)
  await plain.fill('#new_password', NEW_PASSWORD)
  await Promise.all([plain.waitForURL(`${origin}/portal/login?done=reset`), plain.click('button[type=submit]')])
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: other.email, password: NEW_PASSWORD } })).statusCode, 200)
})

t.test('POST /portal/reset counts toward the sign-in limit per address, as POST /auth/reset-password does: 429', async (t) => {
  const app = await portalRecoveryApp(t, { LOGIN_RATE_LIMIT: '2/m' })
  const browser = new PageClient(app)
  const unknown = { token: 'A'.repeat(43), new_password: NEW_PASSWORD }
  t.equal((await browser.post('/portal/reset', unknown)).statusCode, 400, 'below the limit: the service answers')
  t.equal((await app.inject({ method: 'POST', url: '/auth/reset-password', payload: unknown })).statusCode, 400, 'the JSON route counts in the same group')
  const limited = await browser.post('/portal/reset', unknown)
  t.equal(limited.statusCode, 429)
  t.equal(alertCode(limited.body), 'rate_limited')
  t.ok(Number(limited.headers['retry-after']) > 0)
  t.match(limited.body, /<form method="post" action="\/portal\/reset"/, 'the reset page again')
})
