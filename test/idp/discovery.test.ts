import t from 'tap'
import { DISCOVERY_RETRY } from '../../src/idp/upstreams.js'
import { portalApp } from '../routes/portal/support.js'
import { startSignerUpstream } from './signer-upstream.js'
import { answerOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, pageText, PORTAL_ORIGIN, refusal } from './support.js'

/*
 * The providers while they are down (src/idp/upstreams.ts): a failed discovery hides the provider
 * without stopping the start, its start route answers 503, and the retry brings it back; an issuer
 * that is not the document's exactly never comes up; an upstream that does not answer within 10 s
 * is a 503 too. And the switch: off, no route; on, no route in /openapi.json.
 */

const signer = await startSignerUpstream({ clientId: 'gatehouse', clientSecret: CLIENT_SECRET, subject: 'd-1', email: 'down@example.com' })
t.teardown(signer.stop)
signer.discoveryDown(true)
const app = await idpApp(t, [
  { id: 'flaky', type: 'oidc', display_name: 'Flaky SSO', issuer: signer.issuer, allow_signup: true },
  // the document says `http://127.0.0.1:<port>`: a trailing slash is another issuer to OpenID Connect Discovery
  { id: 'slash', type: 'oidc', display_name: 'Slash SSO', issuer: `${signer.issuer}/`, allow_signup: true }
], {}, { idpRetryInterval: 100 })
const UNAVAILABLE = (name: string) => refusal(503, 'idp_unavailable', 'Sign-in unavailable', `${name} is unavailable. Try again in a moment.`)

const loginLinks = async () => pageText((await app.inject({ url: '/portal/login?rd=/portal/account' })).body).links.filter((l) => l.href.includes('/auth/idp/'))

t.test('discovery failing at start: the server runs, the provider is hidden, its start answers 503; the retry brings it back', async (t) => {
  t.strictSame(await loginLinks(), [], 'no link while it is down')
  const down = await new IdpBrowser(app).get('/auth/idp/flaky/start?rd=/portal/account')
  t.strictSame(answerOf(down), UNAVAILABLE('Flaky SSO'))
  t.strictSame(cookiesSet(down), ['__Host-gh_csrf=…'], 'no state cookie')

  signer.discoveryDown(false)
  for (let i = 0; i < 50 && (await loginLinks()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.strictSame(await loginLinks(), [{ href: `${PORTAL_ORIGIN}/auth/idp/flaky/start?rd=${encodeURIComponent(`${PORTAL_ORIGIN}/portal/account`)}`, text: 'Sign in with Flaky SSO' }])
  signer.script({})
  const { callback } = await new IdpBrowser(app).signIn('flaky')
  t.equal(callback.statusCode, 303, 'and it signs in')
})

t.test('a failed discovery is tried again each minute (this suite shortens it to 100 ms)', async (t) => {
  t.equal(DISCOVERY_RETRY, 60_000)
})

t.test('an issuer that is not the discovery document\'s exactly stays hidden', async (t) => {
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.strictSame((await loginLinks()).map((l) => l.text), ['Sign in with Flaky SSO'])
  t.strictSame(answerOf(await new IdpBrowser(app).get('/auth/idp/slash/start')), UNAVAILABLE('Slash SSO'))
})

t.test('a provider that does not answer within 10 s: 503 idp_unavailable', async (t) => {
  signer.script({ delay: 10_500 })
  const started = Date.now()
  const { callback } = await new IdpBrowser(app).signIn('flaky')
  t.strictSame(answerOf(callback), UNAVAILABLE('Flaky SSO'))
  t.ok(Date.now() - started >= 10_000 && Date.now() - started < 10_500, 'given up at 10 s')
  signer.script({})
})

t.test('an unknown provider is a 404 page; the routes are not in /openapi.json', async (t) => {
  const unknown = await new IdpBrowser(app).get('/auth/idp/nobody/start')
  t.equal(unknown.statusCode, 404)
  t.equal(pageText(unknown.body).code, 'not_found')
  t.equal((await new IdpBrowser(app).get('/auth/idp/nobody/callback?state=x')).statusCode, 404)
  const paths = Object.keys((await app.inject({ url: '/openapi.json' })).json().paths as Record<string, unknown>)
  t.strictSame(paths.filter((p) => p.includes('idp')), [])
  t.ok(paths.length > 20, 'the document lists the other routes')
})

t.test('ENABLE_IDP_LOGIN off: /auth/idp/* does not exist and the sign-in page shows no provider', async (t) => {
  const off = await portalApp(t)
  const start = await off.inject({ url: '/auth/idp/flaky/start' })
  t.equal(start.statusCode, 404)
  t.strictSame(start.json(), { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' })
  t.strictSame(pageText((await off.inject({ url: '/portal/login' })).body).links, [])
})
