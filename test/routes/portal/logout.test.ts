import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { authHeader, createUser, setCookies, type CreatedUser } from '../../helper.js'
import { auditRows } from './steps-support.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

const SIGNED_OUT = `${PORTAL_ORIGIN}/portal/login?done=logout`
const DOMAIN = { COOKIE_DOMAIN: 'gh.localhost' }

async function signedIn (app: FastifyInstance, user: CreatedUser): Promise<PageClient> {
  const browser = new PageClient(app)
  const res = await browser.post('/portal/login', { email: user.email, password: user.password })
  if (res.statusCode !== 303) throw new Error(`login: ${res.statusCode}`)
  return browser
}

async function me (app: FastifyInstance, browser: PageClient, access = browser.jar.get('access_token') ?? '') {
  return (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(access) })).statusCode
}

/** The Set-Cookie lines that clear a cookie (empty value, Max-Age 0 or an expiry in the past). */
function cleared (res: Awaited<ReturnType<PageClient['get']>>) {
  return setCookies(res).filter((c) => c.value === '').map((c) => `${c.name}${typeof c.attributes.domain === 'string' ? ` Domain=${c.attributes.domain}` : ''}`).sort()
}

t.test('GET /portal/logout: a page that asks first, with one button for here and one for every device', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app, { email: 'out@example.com' })
  const browser = await signedIn(app, user)
  const page = await browser.get('/portal/logout?rd=/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(page.body, /<title>Sign out – gatehouse<\/title>/)
  t.match(page.body, /<p>You are signed in as <strong>out@example.com<\/strong>.<\/p>/)
  t.match(page.body, /<button type="submit" name="scope" value="local">Sign out<\/button>/)
  t.match(page.body, /<button type="submit" name="scope" value="global" class="secondary">Sign out on every device<\/button>/)
  t.equal(fieldValue(page.body, 'rd'), `${PORTAL_ORIGIN}/portal/account`)
  t.equal(await me(app, browser), 200, 'the page alone signs nobody out')

  const elsewhere = await browser.get('/portal/logout?rd=https://auth.gh.localhost:8443/x')
  t.match(elsewhere.headers['content-security-policy'], /; form-action 'self' https:\/\/auth.gh.localhost:8443$/, 'the form may land on the return URL\'s origin')

  const anonymous = await new PageClient(app).get('/portal/logout')
  t.equal(anonymous.statusCode, 200)
  t.notMatch(anonymous.body, /signed in as/)
  t.equal(fieldValue(anonymous.body, 'rd'), undefined)
})

t.test('POST scope=local: this session revoked, the portal cookies cleared (access with and without Domain), 303 to rd; another session lives', async (t) => {
  const app = await portalApp(t, DOMAIN)
  const user = await createUser(app)
  const other = await signedIn(app, user)
  const browser = await signedIn(app, user)
  const access = browser.jar.get('access_token') ?? ''
  const refresh = browser.jar.get('__Host-refresh_token') ?? ''
  const res = await browser.post('/portal/logout', { scope: 'local', rd: 'https://app.gh.localhost/bye' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, 'https://app.gh.localhost/bye')
  t.strictSame(cleared(res), ['__Host-gh_flow', '__Host-refresh_token', 'access_token', 'access_token Domain=gh.localhost'])
  t.equal(await me(app, browser, access), 401, 'the access token is refused')
  const rotate = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refresh } })
  t.equal(rotate.statusCode, 401, 'the refresh token is spent')
  t.equal(await me(app, other), 200, 'the other browser stays signed in')
  t.match((await auditRows(app, 'logged_out')).at(-1), { userId: user.id, detail: 'local' })
})

t.test('POST scope=global: every session of the user ends', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const other = await signedIn(app, user)
  const browser = await signedIn(app, user)
  const res = await browser.post('/portal/logout', { scope: 'global' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, SIGNED_OUT)
  t.equal(await me(app, other), 401, 'the other browser is signed out too')
  t.match((await auditRows(app, 'logged_out')).at(-1), { userId: user.id, detail: 'global' })
  const page = await browser.get('/portal/login?done=logout')
  t.match(page.body, /<p class="notice" role="status">You are signed out.<\/p>/)
})

t.test('public: without a session (or with one already over) scope=local still clears and 303s; global refuses as /auth/logout does', async (t) => {
  const app = await portalApp(t)
  const nobody = new PageClient(app)
  const local = await nobody.post('/portal/logout', {})
  t.equal(local.statusCode, 303)
  t.equal(local.headers.location, SIGNED_OUT)
  t.strictSame(cleared(local), ['__Host-gh_flow', '__Host-refresh_token', 'access_token'])

  const global = await nobody.post('/portal/logout', { scope: 'global', rd: '/portal/account' })
  t.equal(global.statusCode, 401)
  t.equal(alertCode(global.body), 'token_missing')
  t.match(global.body, /value="global" class="secondary">Sign out on every device/, 'the page again')
  t.equal(fieldValue(global.body, 'rd'), `${PORTAL_ORIGIN}/portal/account`)

  const user = await createUser(app)
  const browser = await signedIn(app, user)
  const stale = new Map(browser.jar)
  t.equal((await browser.post('/portal/logout', {})).statusCode, 303)
  for (const [name, value] of stale) browser.jar.set(name, value)
  const again = await browser.post('/portal/logout', { scope: 'local' })
  t.equal(again.statusCode, 303, 'signing out of a session already over has succeeded')
  for (const [name, value] of stale) browser.jar.set(name, value)
  const everywhere = await browser.post('/portal/logout', { scope: 'global' })
  t.equal(everywhere.statusCode, 401, 'a dead session cannot sign the user out everywhere')
  t.equal(alertCode(everywhere.body), 'token_revoked')
  t.strictSame(cleared(everywhere), ['__Host-gh_flow', '__Host-refresh_token', 'access_token'], 'its cookies are cleared all the same')
})

t.test('an unreadable or expired session cookie: local signs out here all the same, global refuses it', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  browser.jar.set('__Host-refresh_token', 'not-a-token')
  const local = await browser.post('/portal/logout', { scope: 'local' })
  t.equal(local.statusCode, 303)
  t.equal(local.headers.location, SIGNED_OUT)
  browser.jar.set('__Host-refresh_token', 'not-a-token')
  const global = await browser.post('/portal/logout', { scope: 'global' })
  t.equal(global.statusCode, 401)
  t.equal(alertCode(global.body), 'token_invalid')
  t.strictSame(cleared(global), ['__Host-gh_flow', '__Host-refresh_token', 'access_token'])
})

t.test('the return URL is checked: a foreign one goes to the default, audited', async (t) => {
  const app = await portalApp(t)
  const res = await new PageClient(app).post('/portal/logout', { rd: 'https://evil.example/' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.match(await auditRows(app, 'return_url_refused'), [{ outcome: 'failure', detail: 'portal' }])
})

t.test('the sign-out form is CSRF-protected: a forged POST is a 403 page and the session lives (the accepted POST above is the control)', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = await signedIn(app, user)
  const forged = await browser.post('/portal/logout', { scope: 'global' }, { origin: 'http://evil.localhost', 'sec-fetch-site': 'cross-site' })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  t.equal(setCookies(forged).filter((c) => c.name === 'access_token').length, 0, 'nothing cleared')
  t.equal(await me(app, browser), 200)
  const access = browser.jar.get('access_token') ?? ''
  const real = await browser.post('/portal/logout', { scope: 'global' })
  t.equal(real.statusCode, 303)
  t.notOk(browser.jar.has('access_token'), 'cleared')
  t.equal(await me(app, browser, access), 401, 'revoked')
})
