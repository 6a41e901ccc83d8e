import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, claimsOf, createUser, login, PASSWORD, tempDir, type CreatedUser } from '../../helper.js'
import { oathtool, totpApp } from '../auth/two-factor/support.js'
import { axeViolations, launchChromium, listeningPortal, pageProblems } from './chromium.js'
import { alertCode, PAGE_HEADERS, PageClient, portalApp, portalValues, PORTAL_ORIGIN } from './support.js'

const NEW_PASSWORD = 'Brand-New-Secret-42'

function fieldError (html: string, name: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)?.[1]
}

/** A browser signed in to the portal as `user` (through the sign-in page). */
async function signedIn (app: FastifyInstance, user: CreatedUser): Promise<PageClient> {
  const browser = new PageClient(app)
  const res = await browser.post('/portal/login', { email: user.email, password: user.password })
  if (res.statusCode !== 303) throw new Error(`portal sign-in: ${res.statusCode}`)
  return browser
}

/** GET /auth/me with an access token: 401 once its session is revoked, waiting up to one second for it. */
async function refusedWithinASecond (app: FastifyInstance, accessToken: string): Promise<number> {
  const until = Date.now() + 1000
  let status: number
  do {
    status = (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(accessToken) })).statusCode
    if (status === 401) return status
    await new Promise((resolve) => setTimeout(resolve, 50))
  } while (Date.now() < until)
  return status
}

t.test('GET /portal/account without a portal session: 303 to the sign-in page, coming back here', async (t) => {
  const app = await portalApp(t)
  const res = await new PageClient(app).get('/portal/account')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(`${PORTAL_ORIGIN}/portal/account`)}`)
  const action = await new PageClient(app).post('/portal/account/revoke-others', {})
  t.equal(action.statusCode, 303, 'an action too, before its body is looked at, coming back to the page (the action has nothing to GET)')
  t.equal(action.headers.location, res.headers.location)
})

t.test('GET /portal/account: who is signed in, and the sessions, this device marked', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app, { name: 'Ada Lovelace', email: 'ada@example.com' })
  const other = await login(app, user, {})
  const browser = await signedIn(app, user)
  const page = await browser.get('/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Your account – gatehouse<\/title>/)
  t.match(page.body, '<main class="wide">')
  t.match(page.body, '<p>Signed in as <strong>Ada Lovelace</strong> (ada@example.com).</p>')
  const rows = page.body.match(/<tr[ >][\s\S]*?<\/tr>/g) ?? []
  t.equal(rows.length, 3, 'a header and two sessions')
  const current = rows.find((row) => row.includes('aria-current="true"')) ?? ''
  t.match(current, '<strong>This device</strong>')
  t.match(current, /<td>127\.0\.0\.1<\/td>\s*<td class="agent">lightMyRequest<\/td>/)
  t.match(current, /<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/)
  const otherRow = rows.find((row) => row.includes(claimsOf(other.access_token).session_id)) ?? ''
  t.match(otherRow, /<input type="hidden" name="session" value="[0-9a-f-]{36}">\s*<button type="submit" class="secondary">Sign out<\/button>/)
  t.notMatch(page.body, /name="code"|two-factor/i, 'no second factor without ENABLE_TOTP')
})

t.test('revoke one session, then every other: each revoked access token is refused by /auth/me within a second; this browser stays signed in', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const phone = await login(app, user)
  const tablet = await login(app, user)
  const laptop = await login(app, user)
  const browser = await signedIn(app, user)

  const one = await browser.post('/portal/account/revoke-session', { session: claimsOf(phone.access_token).session_id })
  t.equal(one.statusCode, 303)
  t.equal(one.headers.location, `${PORTAL_ORIGIN}/portal/account?done=revoke-session`)
  t.equal(await refusedWithinASecond(app, phone.access_token), 401, 'the revoked session is over')
  t.equal((await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(tablet.access_token) })).statusCode, 200, 'the others go on')
  const page = await browser.get('/portal/account?done=revoke-session')
  t.match(page.body, '<p class="notice" role="status">The session was signed out.</p>')
  t.notMatch(page.body, claimsOf(phone.access_token).session_id)

  const others = await browser.post('/portal/account/revoke-others', {})
  t.equal(others.statusCode, 303)
  t.equal(others.headers.location, `${PORTAL_ORIGIN}/portal/account?done=revoke-others`)
  t.equal(await refusedWithinASecond(app, tablet.access_token), 401)
  t.equal(await refusedWithinASecond(app, laptop.access_token), 401)
  const after = await browser.get('/portal/account?done=revoke-others')
  t.equal(after.statusCode, 200, 'this browser is still signed in')
  t.match(after.body, 'Every other session was signed out.')
  t.equal((after.body.match(/<tr[ >]/g) ?? []).length, 2, 'one session left: this one')

  const unknown = await browser.post('/portal/account/revoke-session', { session: claimsOf(phone.access_token).session_id })
  t.equal(unknown.statusCode, 404, 'a session already over: the JSON route\'s 404')
  t.equal(alertCode(unknown.body), 'not_found')
  t.match(unknown.body, /<main class="wide">[\s\S]*Session not found/, 'on the account page again')
  const malformed = await browser.post('/portal/account/revoke-session', { session: 'nope' })
  t.equal(malformed.statusCode, 422)
  t.equal(alertCode(malformed.body), 'validation_failed')
})

t.test('a forged action is a 403 csrf_rejected page and revokes nothing', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const phone = await login(app, user)
  const browser = await signedIn(app, user)
  const forged = await browser.post('/portal/account/revoke-others', {}, { origin: 'http://evil.localhost' })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const noToken = await browser.post('/portal/account/change-password', { csrf: '', current_password: PASSWORD, new_password: NEW_PASSWORD })
  t.equal(noToken.statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(phone.access_token) })).statusCode, 200, 'nothing was revoked')
  t.equal((await browser.post('/portal/account/revoke-others', {})).statusCode, 303, 'the negative control')
  t.equal(await refusedWithinASecond(app, phone.access_token), 401)
})

t.test('change password: 400 invalid_password and 422 beside their fields; then the other sessions end and this browser stays signed in', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const phone = await login(app, user)
  const browser = await signedIn(app, user)

  const wrong = await browser.post('/portal/account/change-password', { current_password: 'not-it', new_password: NEW_PASSWORD })
  t.equal(wrong.statusCode, 400)
  t.equal(alertCode(wrong.body), 'invalid_password')
  t.equal(fieldError(wrong.body, 'current_password'), 'The current password is incorrect')
  t.match(wrong.body, /<input id="current_password"[^>]* aria-invalid="true" aria-describedby="current_password-error">/)
  t.match(wrong.body, '<main class="wide">', 'the account page again')
  const short = await browser.post('/portal/account/change-password', { current_password: PASSWORD, new_password: 'short' })
  t.equal(short.statusCode, 422)
  t.equal(fieldError(short.body, 'new_password'), 'The new_password field must be at least 8 characters')
  t.equal(fieldError(short.body, 'current_password'), undefined)

  const changed = await browser.post('/portal/account/change-password', { current_password: PASSWORD, new_password: NEW_PASSWORD })
  t.equal(changed.statusCode, 303)
  t.equal(changed.headers.location, `${PORTAL_ORIGIN}/portal/account?done=change-password`)
  t.equal(await refusedWithinASecond(app, phone.access_token), 401, 'the other session is over')
  t.equal((await browser.get('/portal/account')).statusCode, 200, 'this one goes on')
  browser.jar.delete('access_token')
  t.equal((await browser.get('/portal/account')).statusCode, 200, 'and its refresh cookie still renews it')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: NEW_PASSWORD } })).statusCode, 200)
})

t.test('the account actions that check a password share the sign-in limit per address: 429 on the account page', async (t) => {
  // the page's sign-in is the first of the three
  const app = await portalApp(t, { LOGIN_RATE_LIMIT: '3/m' })
  const user = await createUser(app)
  const browser = await signedIn(app, user)
  const first = await browser.post('/portal/account/change-password', { current_password: 'not-it', new_password: NEW_PASSWORD })
  t.equal(first.statusCode, 400, 'below the limit: the service answers')
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/change-password', headers: authHeader(browser.jar.get('access_token') ?? ''), payload: { current_password: 'not-it', new_password: NEW_PASSWORD } })).statusCode, 400, 'the JSON route counts in the same group')
  const limited = await browser.post('/portal/account/change-password', { current_password: PASSWORD, new_password: NEW_PASSWORD })
  t.equal(limited.statusCode, 429)
  t.equal(alertCode(limited.body), 'rate_limited')
  t.ok(Number(limited.headers['retry-after']) > 0)
  t.match(limited.body, '<main class="wide">', 'the account page again')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: NEW_PASSWORD } })).statusCode, 429)
  t.equal((await browser.post('/portal/account/revoke-others', {})).statusCode, 303, 'revoking sessions has no limit, as on the JSON route')
})

t.test('names, emails and browsers are shown escaped', async (t) => {
  const app = await portalApp(t)
  const script = '<script>alert(1)</script>'
  const image = '"><img src=x onerror=alert(1)>'
  const user = await createUser(app, { name: script, email: 'x"><img src=x onerror=alert(1)>@example.com' })
  // an address no sign-in form takes, so the session is started straight through the service, its browser named by the attacker
  const found = await app.services.users.findById(user.id)
  if (found === undefined) throw new Error('no user')
  const pair = await app.services.sessions.start(found, { ip: '127.0.0.1', userAgent: image })
  const browser = new PageClient(app)
  browser.jar.set('access_token', pair.accessToken)
  const page = await browser.get('/portal/account')
  t.equal(page.statusCode, 200)
  for (const raw of [script, image, '<img src=x']) t.notOk(page.body.includes(raw), `no raw ${raw}`)
  t.match(page.body, '<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong>')
  t.match(page.body, '(x&quot;&gt;&lt;img src=x onerror=alert(1)&gt;@example.com)')
  t.match(page.body, '<td class="agent">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>')
})

t.test('two-factor: enrol (QR read by zbarimg) → confirm with oathtool → recovery codes shown once → new codes → disable', async (t) => {
  const app = await totpApp(t, portalValues({ TOTP_ISSUER: 'Example Corp' }))
  const clock = app.testClock
  const user = await createUser(app, { email: 'grace@example.com' })
  const phone = await login(app, user)
  const browser = await signedIn(app, user)
  const off = await browser.get('/portal/account')
  t.match(off.body, /<h2>Two-factor sign-in<\/h2>\s*<p>Off\./)
  t.equal((await browser.get('/portal/account/totp/qr.svg')).statusCode, 404, 'no pending factor, no QR code')

  const wrong = await browser.post('/portal/account/totp-enrol', { password: 'not-it' })
  t.equal(wrong.statusCode, 400)
  t.equal(fieldError(wrong.body, 'password'), 'The current password is incorrect')
  const enrol = await browser.post('/portal/account/totp-enrol', { password: user.password })
  t.equal(enrol.statusCode, 303)
  t.equal(enrol.headers.location, `${PORTAL_ORIGIN}/portal/account?done=totp-enrol`)
  const pending = await browser.get('/portal/account?done=totp-enrol')
  t.match(pending.body, '<img class="qr" src="/portal/account/totp/qr.svg" alt="QR code to add this account to an authenticator app" width="200" height="200">')
  const secret = /<code>([A-Z2-7]{32})<\/code>/.exec(pending.body)?.[1] ?? ''
  t.ok(secret, 'the key, for typing by hand')

  const qr = await browser.get('/portal/account/totp/qr.svg')
  t.equal(qr.statusCode, 200)
  t.equal(qr.headers['content-type'], 'image/svg+xml')
  t.equal(qr.headers['cache-control'], 'no-store')
  const dir = tempDir(t)
  writeFileSync(join(dir, 'qr.svg'), qr.body)
  execFileSync('rsvg-convert', ['-w', '400', '-o', join(dir, 'qr.png'), join(dir, 'qr.svg')])
  t.equal(execFileSync('zbarimg', ['--raw', '-q', join(dir, 'qr.png')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(),
    `otpauth://totp/Example%20Corp:grace%40example.com?issuer=Example%20Corp&secret=${secret}&algorithm=SHA1&digits=6&period=30`)
  t.equal((await new PageClient(app).get('/portal/account/totp/qr.svg')).statusCode, 303, 'the QR code only for its own session')

  const badCode = await browser.post('/portal/account/totp-confirm', { code: oathtool(secret, clock.now + 300_000) })
  t.equal(badCode.statusCode, 400)
  t.equal(alertCode(badCode.body), 'invalid_otp')
  t.equal(fieldError(badCode.body, 'code'), 'The code is invalid or has expired')
  const before = browser.jar.get('access_token') ?? ''
  const confirmed = await browser.post('/portal/account/totp-confirm', { code: oathtool(secret, clock.now) })
  t.equal(confirmed.statusCode, 200, 'recovery codes: the one 200 answer to a POST')
  t.match(confirmed.headers, PAGE_HEADERS)
  const codes = [...confirmed.body.matchAll(/<li>([a-z2-9]{5}-[a-z2-9]{5})<\/li>/g)].map((m) => m[1])
  t.equal(codes.length, 10)
  t.match(confirmed.body, 'Two-factor sign-in is on. Every other session was signed out.')
  const after = browser.jar.get('access_token') ?? ''
  t.not(after, before, 'new tokens, set as cookies')
  t.equal(claimsOf(after).session_id, claimsOf(before).session_id, 'of the same session')
  t.equal(claimsOf(after).aal, 'aal2')
  t.equal(await refusedWithinASecond(app, phone.access_token), 401, 'the other session is over')
  const on = await browser.get('/portal/account')
  t.equal(on.statusCode, 200, 'this browser stays signed in')
  t.match(on.body, '<p>On: signing in asks for a code from your authenticator app.</p>')
  for (const code of codes) t.notOk(on.body.includes(code ?? ''), 'the codes are shown once')
  t.equal((await browser.get('/portal/account/totp/qr.svg')).statusCode, 404, 'nothing pending any more')

  clock.now += 30_000
  const regenerated = await browser.post('/portal/account/recovery-codes', { password: user.password, code: oathtool(secret, clock.now) })
  t.equal(regenerated.statusCode, 200)
  t.match(regenerated.body, 'New recovery codes were made; the old ones no longer work.')
  const fresh = [...regenerated.body.matchAll(/<li>([a-z2-9]{5}-[a-z2-9]{5})<\/li>/g)].map((m) => m[1] ?? '')
  t.equal(fresh.length, 10)
  t.equal(fresh.filter((code) => codes.includes(code)).length, 0)

  const oldCode = await browser.post('/portal/account/totp-disable', { password: user.password, code: codes[0] ?? '' })
  t.equal(oldCode.statusCode, 400, 'an old recovery code no longer works')
  t.equal(fieldError(oldCode.body, 'code'), 'The code is invalid or has expired')
  const disabled = await browser.post('/portal/account/totp-disable', { password: user.password, code: fresh[0] ?? '' })
  t.equal(disabled.statusCode, 303)
  t.equal(disabled.headers.location, `${PORTAL_ORIGIN}/portal/account?done=totp-disable`)
  const offAgain = await browser.get('/portal/account?done=totp-disable')
  t.match(offAgain.body, 'Two-factor sign-in is off.')
  t.equal((await login(app, user)).response.statusCode, 200, 'a password alone signs in again')
})

t.test('with ENABLE_TOTP off the two-factor actions and the QR code do not exist', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = await signedIn(app, user)
  t.equal((await browser.get('/portal/account/totp/qr.svg')).statusCode, 404)
  t.equal((await browser.post('/portal/account/totp-enrol', { password: user.password })).statusCode, 404)
})

t.test('in Chromium: sign in, the account page, enrolment with its QR image, a wrong code, the recovery codes; axe finds nothing serious in any state', async (t) => {
  const { app, origin } = await listeningPortal(t, {}, async (t, values) => await totpApp(t, portalValues(values)))
  const clock = (app as Awaited<ReturnType<typeof totpApp>>).testClock
  const user = await createUser(app, { name: 'Grace Hopper' })
  await login(app, user)
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  const problems = pageProblems(page)

  await page.goto(`${origin}/portal/account`)
  t.equal(page.url(), `${origin}/portal/login?rd=${encodeURIComponent(`${origin}/portal/account`)}`)
  await page.fill('#email', user.email)
  await page.fill('#password', user.password)
  await Promise.all([page.waitForURL(`${origin}/portal/account`), page.click('button[type=submit]')])
  t.equal(await page.textContent('h1'), 'Your account')
  t.same(await axeViolations(page), [], 'the account page')

  await page.fill('form[action$="/totp-enrol"] #password', user.password)
  await Promise.all([page.waitForURL(`${origin}/portal/account?done=totp-enrol`), page.click('form[action$="/totp-enrol"] button')])
  t.equal(await page.evaluate("(() => { const img = document.querySelector('img.qr'); return img.complete && img.naturalWidth > 0 })()"), true, 'the QR image loads')
  t.same(await axeViolations(page), [], 'enrolment pending')
  const secret = await page.textContent('code') ?? ''
  await page.fill('#code', oathtool(secret, clock.now + 300_000))
  await Promise.all([page.waitForLoadState(), page.click('form[action$="/totp-confirm"] button')])
  t.equal(await page.textContent('#code-error'), 'The code is invalid or has expired')
  t.same(await axeViolations(page), [], 'a wrong code')
  await page.fill('#code', oathtool(secret, clock.now))
  await Promise.all([page.waitForLoadState(), page.click('form[action$="/totp-confirm"] button')])
  t.equal(await page.locator('ol.codes li').count(), 10, 'the recovery codes')
  t.same(await axeViolations(page), [], 'the recovery codes page')
  await page.goto(`${origin}/portal/account`)
  t.equal(await page.locator('ol.codes li').count(), 0, 'shown once')
  t.same(problems, [], 'no script error, no CSP violation, nothing failed to load')

  // the negative control: axe does report a control without a label
  await page.evaluate("document.querySelector('form').append(document.createElement('input'))")
  t.match(await axeViolations(page), [/^label: /])
})
