import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createUser } from '../../helper.js'
import { auditRows } from './steps-support.js'
import { alertCode, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'

const APP_URL = 'https://app.gh.localhost/reports?q=1'

async function signedIn (app: FastifyInstance, email = 'who@example.com'): Promise<PageClient> {
  const user = await createUser(app, { email })
  const browser = new PageClient(app)
  await browser.post('/portal/login', { email: user.email, password: user.password })
  return browser
}

const links = (html: string) => [...html.matchAll(/<li><a href="([^"]*)">([^<]*)<\/a><\/li>/g)].map((m) => [m[1]?.replaceAll('&amp;', '&'), m[2]])
const roles = (html: string) => [...html.matchAll(/<li><code>([^<]*)<\/code><\/li>/g)].map((m) => m[1])

t.test('GET /portal/forbidden: always 403, never a redirect; who is signed in, the reason, the roles, the ways on', async (t) => {
  const app = await portalApp(t, { COOKIE_DOMAIN: 'gh.localhost' })
  const browser = await signedIn(app)
  const res = await browser.get(`/portal/forbidden?rd=${encodeURIComponent(APP_URL)}&reason=missing_role&roles=admin,editor`)
  t.equal(res.statusCode, 403)
  t.equal(res.headers.location, undefined)
  t.match(res.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.match(res.body, /<title>Access denied – gatehouse<\/title>/)
  t.equal(alertCode(res.body), 'forbidden')
  t.match(res.body, /<p>You are signed in as <strong>who@example.com<\/strong>.<\/p>/)
  t.match(res.body, /<code data-reason="missing_role">missing_role<\/code>/)
  t.match(res.body, /Your account does not have a role this page needs./)
  t.strictSame(roles(res.body), ['admin', 'editor'])
  t.strictSame(links(res.body), [
    [`${PORTAL_ORIGIN}/portal/login?prompt=login&rd=${encodeURIComponent(APP_URL)}`, 'Sign in as someone else'],
    ['/portal/account', 'Your account']
  ])
  // "Sign in as someone else" shows the form even with a live session (prompt=login)
  const again = await browser.get(`/portal/login?prompt=login&rd=${encodeURIComponent(APP_URL)}`)
  t.equal(again.statusCode, 200)
  t.match(again.body, /name="password"/)
})

t.test('without a session: 403 all the same, "Sign in"; a refused rd falls back to the default (audited)', async (t) => {
  const app = await portalApp(t)
  const res = await new PageClient(app).get('/portal/forbidden?rd=https://evil.example/')
  t.equal(res.statusCode, 403)
  t.match(res.body, /<p>You are not signed in.<\/p>/)
  t.match(res.body, /You do not have access to this page./)
  t.notMatch(res.body, /data-reason/, 'no reason given, none shown')
  t.strictSame(links(res.body)[0], [`${PORTAL_ORIGIN}/portal/login?prompt=login&rd=${encodeURIComponent(`${PORTAL_ORIGIN}/portal/account`)}`, 'Sign in'])
  t.match(await auditRows(app, 'return_url_refused'), [{ detail: 'portal' }])
  const bare = await new PageClient(app).get('/portal/forbidden')
  t.equal(bare.statusCode, 403)
})

t.test('AUTHZ_DENIAL_DETAILS=false leaves the roles out, the reason stays (with true, the control above shows them)', async (t) => {
  const app = await portalApp(t, { AUTHZ_DENIAL_DETAILS: false })
  const browser = await signedIn(app)
  const res = await browser.get('/portal/forbidden?reason=missing_role&roles=admin,editor')
  t.equal(res.statusCode, 403)
  t.strictSame(roles(res.body), [])
  t.notMatch(res.body, /admin|editor|Any one of these roles/)
  t.match(res.body, /data-reason="missing_role"/)
})

t.test('the query cannot put text on the page: unknown reasons and non-role words are dropped, the rest escaped', async (t) => {
  const app = await portalApp(t)
  const browser = await signedIn(app)
  const res = await browser.get(`/portal/forbidden?reason=${encodeURIComponent('<b>call us</b>')}&roles=${encodeURIComponent('admin, Call+1-555 <script>, ops')}`)
  t.equal(res.statusCode, 403)
  t.notMatch(res.body, /call us|<script>|Call/)
  t.strictSame(roles(res.body), ['admin', 'ops'])
  t.match(res.body, /data-reason="missing_role"/, 'roles asked for are a missing role')
  const notOwner = await browser.get('/portal/forbidden?reason=not_owner&roles=admin')
  t.match(notOwner.body, /This page belongs to another account./)
  t.strictSame(roles(notOwner.body), [], 'roles go with missing_role only')
  const superuser = await browser.get('/portal/forbidden?reason=superuser_required')
  t.match(superuser.body, /Only a superuser may open this page./)
  // still 403, whatever the query's shape: a list longer than /auth/verify reads, repeated keys
  const long = await browser.get(`/portal/forbidden?roles=admin,${'a'.repeat(1025)}`)
  t.equal(long.statusCode, 403)
  t.strictSame(roles(long.body), [])
  const repeated = await browser.get('/portal/forbidden?reason=a&reason=b&roles=x&roles=y&rd=/a&rd=/b')
  t.equal(repeated.statusCode, 403)
  t.strictSame(roles(repeated.body), [])
})
