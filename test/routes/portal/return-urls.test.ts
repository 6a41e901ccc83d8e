// Proves src/portal/return-url.ts through the redirects of plugins/portal-session.ts (sign-in, silent refresh, sign-out).
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createUser, setCookies } from '../../helper.js'
import { ALLOWED, REFUSED, SETTINGS } from '../../src/portal/return-url-cases.js'
import { auditRows } from './steps-support.js'
import { fieldValue, PageClient, portalApp } from './support.js'

const DEFAULT = `${SETTINGS.PUBLIC_URL}/portal/account`
const rdQuery = (raw: string) => `rd=${encodeURIComponent(raw)}`

/** A browser holding only the access cookie of a portal session (no loop-guard count carried over). */
function browserWith (app: FastifyInstance, access: string): PageClient {
  const browser = new PageClient(app)
  browser.jar.set('access_token', access)
  return browser
}

async function sessionCookie (app: FastifyInstance): Promise<string> {
  const user = await createUser(app)
  const browser = new PageClient(app)
  await browser.post('/portal/login', { email: user.email, password: user.password })
  return browser.jar.get('access_token') ?? ''
}

t.test('silent refresh: every attack lands on the default, each audited return_url_refused', async (t) => {
  const app = await portalApp(t, SETTINGS)
  const access = await sessionCookie(app)
  for (const [raw, why] of REFUSED) {
    const res = await browserWith(app, access).get(`/portal/login?${rdQuery(raw)}`)
    t.equal(res.statusCode, 303, why)
    t.equal(res.headers.location, DEFAULT, why)
    t.notOk(setCookies(res).some((c) => c.name === 'x'), `${why}: no cookie injected`)
  }
  const refused = await auditRows(app, 'return_url_refused')
  t.equal(refused.length, REFUSED.length, 'one audit row each')
  t.match(refused[0], { outcome: 'failure', detail: 'portal' })
})

t.test('silent refresh: the allowed forms go exactly where WHATWG says (the negative control)', async (t) => {
  const app = await portalApp(t, SETTINGS)
  const access = await sessionCookie(app)
  for (const [raw, expected, why] of ALLOWED) {
    const res = await browserWith(app, access).get(`/portal/login?${rdQuery(raw)}`)
    t.equal(res.statusCode, 303, why)
    t.equal(res.headers.location, expected, why)
  }
  t.equal((await auditRows(app, 'return_url_refused')).length, 0, 'none refused')
  const missing = await browserWith(app, access).get('/portal/login')
  t.equal(missing.headers.location, DEFAULT, 'no rd: the default, not audited')
  t.equal((await auditRows(app, 'return_url_refused')).length, 0)
})

t.test('a password sign-in: every attack lands on the default; the form carries the checked value', async (t) => {
  const app = await portalApp(t, SETTINGS)
  const user = await createUser(app)
  for (const [raw, why] of REFUSED) {
    const browser = new PageClient(app)
    const page = await browser.get(`/portal/login?${rdQuery(raw)}`)
    t.equal(fieldValue(page.body, 'rd'), DEFAULT, `${why}: the form's rd`)
    const res = await browser.post('/portal/login', { email: user.email, password: user.password, rd: raw })
    t.equal(res.statusCode, 303, why)
    t.equal(res.headers.location, DEFAULT, why)
  }
  const [raw, expected] = ALLOWED.find(([, , why]) => why === 'a subdomain of COOKIE_DOMAIN') ?? []
  const control = await new PageClient(app).post('/portal/login', { email: user.email, password: user.password, rd: raw ?? '' })
  t.equal(control.headers.location, expected, 'the control: an allowed one is followed')
})

t.test('sign-out: every attack lands on the default too', async (t) => {
  const app = await portalApp(t, SETTINGS)
  for (const [raw, why] of REFUSED) {
    const res = await new PageClient(app).post('/portal/logout', { rd: raw })
    t.equal(res.statusCode, 303, why)
    t.equal(res.headers.location, DEFAULT, why)
  }
  const control = await new PageClient(app).post('/portal/logout', { rd: 'https://partner.example/back' })
  t.equal(control.headers.location, 'https://partner.example/back')
})

t.test('a form shown again after a failure still lets the browser land on its return URL\'s origin (CSP form-action)', async (t) => {
  const app = await portalApp(t, SETTINGS)
  const user = await createUser(app)
  const browser = new PageClient(app)
  const wrong = await browser.post('/portal/login', { email: user.email, password: 'not-it', rd: 'https://partner.example/back' })
  t.equal(wrong.statusCode, 401)
  t.match(wrong.headers['content-security-policy'], /; form-action 'self' https:\/\/partner.example$/)
  const refused = await browser.post('/portal/login', { email: user.email, password: 'not-it', rd: 'https://evil.com/' })
  t.match(refused.headers['content-security-policy'], /; form-action 'self'$/, 'a refused one adds nothing')
  const logout = await browser.post('/portal/logout', { scope: 'global', rd: 'https://app.gh.localhost/' })
  t.equal(logout.statusCode, 401)
  t.match(logout.headers['content-security-policy'], /; form-action 'self' https:\/\/app.gh.localhost$/)
})
