// Proves routes/portal/login.ts's silent refresh and plugins/portal-session.ts's session: rotation, the previous session ended, audit detail portal.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { authHeader, claimsOf, createUser, login, setCookies, type CreatedUser } from '../../helper.js'
import { auditRows } from './steps-support.js'
import { fieldValue, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

const ACCOUNT = `${PORTAL_ORIGIN}/portal/account`

async function signedIn (app: FastifyInstance, user: CreatedUser): Promise<PageClient> {
  const browser = new PageClient(app)
  const res = await browser.post('/portal/login', { email: user.email, password: user.password })
  if (res.statusCode !== 303) throw new Error(`login: ${res.statusCode}`)
  return browser
}

const meStatus = async (app: FastifyInstance, access: string) =>
  (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(access) })).statusCode

t.test('a valid access cookie: 303 to the return URL, no form, nothing rotated', async (t) => {
  const app = await portalApp(t)
  const browser = await signedIn(app, await createUser(app))
  const res = await browser.get('/portal/login?rd=/portal/account%3Ftab%3D1')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${ACCOUNT}?tab=1`)
  t.equal(res.body, '')
  t.notOk(setCookies(res).some((c) => c.name === 'access_token' || c.name === '__Host-refresh_token'))

  const prompt = await browser.get('/portal/login?prompt=login&rd=/portal/account')
  t.equal(prompt.statusCode, 200, 'prompt=login shows the form all the same')
  t.match(prompt.body, /name="password"/)
  t.equal(fieldValue(prompt.body, 'rd'), ACCOUNT)
})

t.test('an expired access cookie and a live __Host-refresh_token: rotated cookies and 303, the same session', async (t) => {
  const app = await portalApp(t, { ACCESS_TOKEN_TTL: '1s' })
  const browser = await signedIn(app, await createUser(app))
  const oldAccess = browser.jar.get('access_token') ?? ''
  const oldRefresh = browser.jar.get('__Host-refresh_token') ?? ''
  const expiry = claimsOf(oldAccess).exp * 1000
  while (Date.now() <= expiry) await sleep(expiry - Date.now() + 50)
  t.equal(await meStatus(app, oldAccess), 401, 'the access token has expired')

  const res = await browser.get('/portal/login?rd=/portal/account')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, ACCOUNT)
  const cookies = Object.fromEntries(setCookies(res).map((c) => [c.name, c]))
  t.ok(cookies.access_token?.value && cookies.access_token.value !== oldAccess, 'a new access cookie')
  t.ok(cookies['__Host-refresh_token']?.value && cookies['__Host-refresh_token'].value !== oldRefresh, 'a new refresh cookie')
  t.match(cookies['__Host-refresh_token']?.attributes, { path: '/', httponly: true, secure: true, samesite: 'Lax' })
  t.equal(claimsOf(cookies.access_token?.value ?? '').session_id, claimsOf(oldAccess).session_id, 'the same session, rotated')
  t.equal(await meStatus(app, cookies.access_token?.value ?? ''), 200)
  t.match(await auditRows(app, 'refreshed'), [{ outcome: 'success', sessionId: claimsOf(oldAccess).session_id, detail: 'portal' }])
})

t.test('no access cookie and a dead refresh cookie: the form, the dead cookies cleared', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = await signedIn(app, user)
  browser.jar.delete('access_token')
  // the session ends elsewhere: signed out on every device from another client
  const other = await login(app, user)
  await app.inject({ method: 'POST', url: '/auth/logout?scope=global', headers: authHeader(other.access_token), payload: {} })
  const res = await browser.get('/portal/login?rd=/portal/account')
  t.equal(res.statusCode, 200)
  t.match(res.body, /name="password"/)
  t.notOk(browser.jar.has('__Host-refresh_token'), 'cleared')
})

t.test('a portal sign-in first ends the browser\'s previous session (local logout)', async (t) => {
  const app = await portalApp(t)
  const alice = await createUser(app, { email: 'alice@example.com' })
  const bob = await createUser(app, { email: 'bob@example.com' })
  const browser = await signedIn(app, alice)
  const aliceElsewhere = await signedIn(app, alice)
  const aliceAccess = browser.jar.get('access_token') ?? ''
  const aliceSession = claimsOf(aliceAccess).session_id

  const res = await browser.post('/portal/login', { email: bob.email, password: bob.password, rd: '/portal/account' })
  t.equal(res.statusCode, 303)
  t.equal(claimsOf(browser.jar.get('access_token') ?? '').user_id, bob.id, 'now Bob')
  t.equal(await meStatus(app, aliceAccess), 401, 'Alice\'s session in this browser is over')
  t.equal(await meStatus(app, aliceElsewhere.jar.get('access_token') ?? ''), 200, 'her other session is not touched')
  t.match((await auditRows(app, 'logged_out')).at(-1), { userId: alice.id, sessionId: aliceSession, detail: 'local' })

  // the control: a browser with no previous session ends nothing
  const before = (await auditRows(app, 'logged_out')).length
  await signedIn(app, alice)
  t.equal((await auditRows(app, 'logged_out')).length, before)
})

t.test('sign-ins through the portal are audited with detail portal; a JSON sign-in is not (the control)', async (t) => {
  const app = await portalApp(t)
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/login', { email: user.email, password: 'wrong-password-1' })
  await browser.post('/portal/login', { email: user.email, password: user.password })
  await login(app, user)
  const succeeded = await auditRows(app, 'login_succeeded')
  t.match(succeeded, [{ userId: user.id, detail: 'portal' }, { userId: user.id, detail: null }])
  t.equal(succeeded.length, 2)
  t.match(await auditRows(app, 'login_failed'), [{ outcome: 'failure', userId: user.id, detail: 'portal' }])
})
