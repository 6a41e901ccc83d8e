// Proves src/portal/loop-guard.ts as plugins/portal-session.ts applies it to the portal's redirects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createUser, setCookies } from '../../helper.js'
import { auditRows } from './steps-support.js'
import { alertCode, PAGE_HEADERS, PageClient, portalApp } from './support.js'

const APP = 'https://app.gh.localhost/dashboard'
const DOMAIN = { COOKIE_DOMAIN: 'gh.localhost' }

async function signedIn (app: FastifyInstance): Promise<PageClient> {
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/login', { email: user.email, password: user.password, rd: '/portal/account' })
  return browser
}

const toApp = async (browser: PageClient) => await browser.get(`/portal/login?rd=${encodeURIComponent(APP)}`)

t.test('three cross-host redirects within 30 s pass; the fourth is a 508 redirect_loop page, audited', async (t) => {
  const app = await portalApp(t, DOMAIN)
  const browser = await signedIn(app)
  for (let i = 1; i <= 3; i++) {
    const res = await toApp(browser)
    t.equal(res.statusCode, 303, `redirect ${i} passes`)
    t.equal(res.headers.location, APP)
    const counter = setCookies(res).find((c) => c.name === '__Host-gh_rd')
    t.match(counter, { value: new RegExp(`^${i}\\.\\d+$`), attributes: { path: '/', httponly: true, secure: true, samesite: 'Lax' } })
    t.ok(Number(counter?.attributes['max-age']) <= 30 && Number(counter?.attributes['max-age']) >= 29, 'lives what is left of the 30 s')
  }
  const looping = await toApp(browser)
  t.equal(looping.statusCode, 508)
  t.equal(looping.headers.location, undefined)
  t.match(looping.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.equal(alertCode(looping.body), 'redirect_loop')
  t.match(looping.body, /<title>Redirect loop – gatehouse<\/title>/)
  t.match(looping.body, /The application does not receive your sign-in: check COOKIE_DOMAIN./)
  t.match(await auditRows(app, 'redirect_loop_detected'), [{ outcome: 'failure', detail: 'portal' }])
  t.equal((await auditRows(app, 'redirect_loop_detected')).length, 1)

  // another browser of the same user has its own count: the guard is per browser
  const other = new PageClient(app)
  other.jar.set('access_token', browser.jar.get('access_token') ?? '')
  t.equal((await toApp(other)).statusCode, 303)
})

t.test('redirects on the portal\'s own host do not count', async (t) => {
  const app = await portalApp(t, DOMAIN)
  const browser = await signedIn(app)
  for (let i = 0; i < 10; i++) {
    const res = await browser.get('/portal/login?rd=/portal/account')
    t.equal(res.statusCode, 303)
    t.notOk(setCookies(res).some((c) => c.name === '__Host-gh_rd'), 'no count')
  }
  const counts = []
  for (let i = 0; i < 4; i++) counts.push((await toApp(browser)).statusCode)
  t.strictSame(counts, [303, 303, 303, 508], 'the cross-host ones still count from one')
})

t.test('a count older than 30 s starts again; sign-ins count too', async (t) => {
  const app = await portalApp(t, DOMAIN)
  const browser = await signedIn(app)
  browser.jar.set('__Host-gh_rd', `3.${Math.floor(Date.now() / 1000) - 31}`)
  const res = await toApp(browser)
  t.equal(res.statusCode, 303, 'three, but from 31 s ago')
  t.match(setCookies(res).find((c) => c.name === '__Host-gh_rd')?.value, /^1\./)

  browser.jar.set('__Host-gh_rd', `3.${Math.floor(Date.now() / 1000) - 5}`)
  const user = await createUser(app)
  const signIn = await browser.post('/portal/login', { email: user.email, password: user.password, rd: APP })
  t.equal(signIn.statusCode, 508, 'a password sign-in\'s redirect is the fourth within 30 s')
  t.equal(alertCode(signIn.body), 'redirect_loop')
})
