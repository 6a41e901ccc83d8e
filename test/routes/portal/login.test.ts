import t from 'tap'
import { createUser, setCookies } from '../../helper.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

t.test('GET /portal/login: the page, its headers and the CSRF cookie', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  const page = await browser.get('/portal/login?rd=/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Sign in – gatehouse<\/title>/)
  const csrf = setCookies(page).find((c) => c.name === '__Host-gh_csrf')
  t.strictSame(csrf?.attributes, { path: '/', httponly: true, secure: true, samesite: 'Lax' })
  t.equal(fieldValue(page.body, 'csrf'), csrf?.value, 'the form carries the cookie\'s token')
  t.equal(fieldValue(page.body, 'rd'), `${PORTAL_ORIGIN}/portal/account`)
})

t.test('POST /portal/login: 303 to the return URL with the portal cookies; a wrong password shows the page again with 401', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = new PageClient(app)
  const wrong = await browser.post('/portal/login', { email: user.email, password: 'not-it', rd: '/portal/account' })
  t.equal(wrong.statusCode, 401)
  t.equal(alertCode(wrong.body), 'invalid_credentials')
  t.equal(fieldValue(wrong.body, 'email'), user.email, 'the email is kept')
  t.equal(fieldValue(wrong.body, 'password'), undefined, 'the password never is')

  const right = await browser.post('/portal/login', { email: user.email, password: user.password, rd: '/portal/account' })
  t.equal(right.statusCode, 303)
  t.equal(right.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  const cookies = Object.fromEntries(setCookies(right).map((c) => [c.name, c.attributes]))
  t.match(cookies.access_token, { path: '/', httponly: true, samesite: 'Lax', 'max-age': '900' })
  t.match(cookies['__Host-refresh_token'], { path: '/', httponly: true, secure: true, samesite: 'Lax' })
  t.notOk(cookies.access_token?.domain, 'host-only without COOKIE_DOMAIN')
})

t.test('a POST without the CSRF token, or from another origin, is a 403 csrf_rejected page; JSON is 415', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = new PageClient(app)
  const forged = await browser.post('/portal/login', { email: user.email, password: user.password, csrf: 'x'.repeat(43) })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const foreign = await browser.post('/portal/login', { email: user.email, password: user.password }, { origin: 'http://evil.localhost' })
  t.equal(foreign.statusCode, 403)
  // the negative control: the same browser, same-origin, signs in
  const same = await browser.post('/portal/login', { email: user.email, password: user.password })
  t.equal(same.statusCode, 303)
  const json = await app.inject({ method: 'POST', url: '/portal/login', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(json.statusCode, 415)
  t.match(json.headers, PAGE_HEADERS)
})

t.test('the page\'s POST counts against LOGIN_RATE_LIMIT with /auth/login: past it, the page again with 429 and Retry-After', async (t) => {
  const app = await portalApp(t, { LOGIN_RATE_LIMIT: '2/m' })
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.get('/portal/login')
  const json = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: 'not-it' } })
  t.equal(json.statusCode, 401)
  const second = await browser.post('/portal/login', { email: user.email, password: 'not-it' })
  t.equal(second.statusCode, 401, 'the second of two is still answered')
  const third = await browser.post('/portal/login', { email: user.email, password: user.password })
  t.equal(third.statusCode, 429)
  t.equal(alertCode(third.body), 'rate_limited')
  t.match(third.headers['retry-after'], /^[0-9]+$/)
  t.match(third.body, /<form method="post" action="\/portal\/login"/, 'the form is shown again')
})

t.test('first visits get the same page but each its own token, and a hostile login hint stays text on the kept page', async (t) => {
  const app = await portalApp(t)
  const hint = '"><script>alert(1)</script>'
  const url = `/portal/login?login_hint=${encodeURIComponent(hint)}`
  const first = await app.inject({ url })
  const second = await app.inject({ url })
  const tokenOf = (body: string) => fieldValue(body, 'csrf') ?? ''
  t.not(tokenOf(first.body), tokenOf(second.body))
  t.equal(second.body.replace(tokenOf(second.body), 'T'), first.body.replace(tokenOf(first.body), 'T'))
  for (const page of [first, second]) {
    t.notMatch(page.body, '<script>alert(1)</script>')
    t.equal(fieldValue(page.body, 'email'), hint, 'shown as the value it is')
    t.equal(setCookies(page).find((c) => c.name === '__Host-gh_csrf')?.value, tokenOf(page.body), 'the cookie holds the page\'s token')
  }
})
