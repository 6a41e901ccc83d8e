import t from 'tap'
import { authHeader, createUser, PASSWORD } from '../../helper.js'
import { axeViolations, launchChromium, listeningPortal, pageProblems } from './chromium.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

const REGISTER = { ENABLE_REGISTER: true }

/** The message shown beside field `name`, if any. */
function fieldError (html: string, name: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)?.[1]
}

t.test('GET /portal/register: the form, labelled, with the return URL', async (t) => {
  const app = await portalApp(t, REGISTER)
  const page = await new PageClient(app).get('/portal/register?rd=/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Create an account – gatehouse<\/title>/)
  t.match(page.body, /<label for="name">Name<\/label>[\s\S]*<input id="name" name="name" type="text" autocomplete="name" required autofocus>/)
  t.match(page.body, /<input id="email" name="email" type="email" autocomplete="email" required>/)
  t.match(page.body, /<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-hint">/)
  t.equal(fieldValue(page.body, 'rd'), `${PORTAL_ORIGIN}/portal/account`)
})

t.test('POST /portal/register: the account exists, the browser is signed in to it, 303 to the return URL', async (t) => {
  const app = await portalApp(t, REGISTER)
  const audited: string[] = []
  app.services.events.on('audit', ({ record, context }) => { audited.push(`${record.event} ${context.via ?? ''}`) })
  const browser = new PageClient(app)
  const res = await browser.post('/portal/register', { name: 'New Person', email: ' New@Example.com ', password: PASSWORD, rd: '/portal/account' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.equal(res.body, '')
  const access = browser.jar.get('access_token')
  t.ok(access, 'the access cookie is set')
  t.ok(browser.jar.get('__Host-refresh_token'), 'and the portal refresh cookie')
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(access ?? '') })
  t.equal(me.statusCode, 200)
  t.match(me.json(), { email: 'new@example.com', name: 'New Person', roles: ['user'], is_superuser: false, age: null })
  t.strictSame(audited, ['registered portal'], 'audited as POST /auth/register is, from the portal')
})

t.test('a refused registration shows the form again: 422 with each message beside its field, 400 email_taken', async (t) => {
  const app = await portalApp(t, REGISTER)
  const browser = new PageClient(app)
  const bad = await browser.post('/portal/register', { name: 'N', email: 'not-an-email', password: 'short' })
  t.equal(bad.statusCode, 422)
  t.match(bad.headers, PAGE_HEADERS)
  t.equal(alertCode(bad.body), 'validation_failed')
  // the JSON route's messages (POST /auth/register says the same for the same body)
  t.equal(fieldError(bad.body, 'name'), 'The name field must be at least 2 characters')
  t.equal(fieldError(bad.body, 'email'), 'The email field must be a valid email address')
  t.equal(fieldError(bad.body, 'password'), 'The password field must be at least 8 characters')
  const json = await app.inject({ method: 'POST', url: '/auth/register', payload: { name: 'N', email: 'not-an-email', password: 'short' } })
  t.strictSame(json.json().errors, {
    name: ['The name field must be at least 2 characters'],
    email: ['The email field must be a valid email address'],
    password: ['The password field must be at least 8 characters']
  })
  t.match(bad.body, /<input id="password"[^>]* aria-invalid="true" aria-describedby="password-hint password-error">/)
  t.equal(fieldValue(bad.body, 'name'), 'N', 'the name and email are kept')
  t.equal(fieldValue(bad.body, 'password'), undefined, 'the password never is')

  const taken = await createUser(app)
  const again = await browser.post('/portal/register', { name: 'Someone', email: taken.email, password: PASSWORD })
  t.equal(again.statusCode, 400)
  t.equal(alertCode(again.body), 'email_taken')
  t.match(again.body, /The email has already been taken/)
  t.notOk(browser.jar.has('access_token'), 'nobody is signed in')
})

t.test('POST /portal/register shares the per-address limit of POST /auth/register: 429 with Retry-After', async (t) => {
  const app = await portalApp(t, { ...REGISTER, LOGIN_RATE_LIMIT: '2/m' })
  const browser = new PageClient(app)
  t.equal((await app.inject({ method: 'POST', url: '/auth/register', payload: { name: 'A', email: 'a@example.com', password: PASSWORD } })).statusCode, 422)
  t.equal((await browser.post('/portal/register', { name: 'Bb', email: 'b@example.com', password: PASSWORD })).statusCode, 303, 'the second attempt passes')
  const third = await browser.post('/portal/register', { name: 'Cc', email: 'c@example.com', password: PASSWORD })
  t.equal(third.statusCode, 429)
  t.equal(alertCode(third.body), 'rate_limited')
  t.ok(Number(third.headers['retry-after']) > 0)
  t.equal(await app.services.users.findByEmail('c@example.com'), undefined, 'nothing was made')
})

t.test('a forged POST is a 403 csrf_rejected page and makes no account; the same form with its token does', async (t) => {
  const app = await portalApp(t, REGISTER)
  const browser = new PageClient(app)
  const forged = await browser.post('/portal/register', { name: 'Eve', email: 'eve@example.com', password: PASSWORD }, { origin: 'http://evil.localhost' })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const noToken = await browser.post('/portal/register', { name: 'Eve', email: 'eve@example.com', password: PASSWORD, csrf: '' })
  t.equal(noToken.statusCode, 403)
  t.equal(await app.services.users.findByEmail('eve@example.com'), undefined)
  t.equal((await browser.post('/portal/register', { name: 'Eve', email: 'eve@example.com', password: PASSWORD })).statusCode, 303, 'the negative control')
})

t.test('with ENABLE_REGISTER off the page does not exist (404), and the sign-in page does not offer it', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  const page = await browser.get('/portal/register')
  t.equal(page.statusCode, 404)
  t.equal(alertCode(page.body), 'not_found')
  t.equal((await browser.post('/portal/register', { name: 'Eve', email: 'eve@example.com', password: PASSWORD })).statusCode, 404)
  t.notMatch((await browser.get('/portal/login')).body, /register/)
  const on = await portalApp(t, REGISTER)
  t.match((await new PageClient(on).get('/portal/login')).body, /href="http:\/\/auth\.gh\.localhost\/portal\/register\?rd=[^"]+">Create an account</, 'the negative control')
})

t.test('in Chromium: the form, its 422 state and the account it leads to; axe finds nothing serious', async (t) => {
  const { app, origin } = await listeningPortal(t, REGISTER)
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  const problems = pageProblems(page)
  await page.goto(`${origin}/portal/register`)
  t.same(await axeViolations(page), [], 'the form')
  await page.fill('#name', 'N')
  await page.fill('#email', 'new@example.com')
  await page.fill('#password', 'short')
  await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')])
  t.equal(await page.textContent('#name-error'), 'The name field must be at least 2 characters')
  t.equal(await page.textContent('#password-error'), 'The password field must be at least 8 characters')
  t.same(await axeViolations(page), [], 'the form with its errors')
  await page.fill('#name', 'New Person')
  await page.fill('#password', PASSWORD)
  await Promise.all([page.waitForURL(`${origin}/portal/account`), page.click('button[type=submit]')])
  t.equal(await page.textContent('h1'), 'Your account', 'signed in, on the default return URL')
  t.same(problems, [])
  t.ok(await app.services.users.findByEmail('new@example.com'))
})

t.test('a return URL on another allowed host: form-action allows it on the page and on the page shown again after a 422', async (t) => {
  const app = await portalApp(t, { ...REGISTER, PORTAL_RETURN_HOSTS: 'app.gh.localhost' })
  const browser = new PageClient(app)
  const policy = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self' http://app.gh.localhost"
  const page = await browser.get('/portal/register?rd=http://app.gh.localhost/home')
  t.equal(page.headers['content-security-policy'], policy)
  const bad = await browser.post('/portal/register', { name: 'N', email: 'new@example.com', password: PASSWORD, rd: 'http://app.gh.localhost/home' })
  t.equal(bad.statusCode, 422)
  t.equal(bad.headers['content-security-policy'], policy, 'the form sent again must still be let through to it')
  const good = await browser.post('/portal/register', { name: 'New Person', email: 'new@example.com', password: PASSWORD, rd: 'http://app.gh.localhost/home' })
  t.equal(good.statusCode, 303)
  t.equal(good.headers.location, 'http://app.gh.localhost/home')
  const refused = await browser.post('/portal/register', { name: 'N', email: 'other@example.com', password: PASSWORD, rd: 'http://evil.localhost/' })
  t.equal(refused.headers['content-security-policy'], PAGE_HEADERS['content-security-policy'], 'the negative control: a refused return URL widens nothing')
})
