import t from 'tap'
import { fieldValue, PAGE_HEADERS } from '../portal/support.js'
import { addClient, codeFor, exchange, flowApp, ISSUER, person, pkce, signedIn } from './flow-support.js'

/* GET /oauth2/end-session (RP-initiated logout, routes/oauth2/end-session.ts). */

const LOGGED_OUT = 'https://app.example/bye'
const SIGNED_OUT = `${ISSUER}/portal/login?done=logout`

t.test('a valid ID token hint naming the browser\'s session ends it at once (expired or not), then the registered post_logout_redirect_uri with state', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { post_logout_redirect_uris: [LOGGED_OUT], skip_consent: true })
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const portalAccess = browser.jar.get('access_token') as string
  const p = pkce()
  const tokens = (await exchange(flow, 'web-app', await codeFor(flow, browser, 'web-app', p), p)).json() as Record<string, string>
  const query = new URLSearchParams({ id_token_hint: tokens.id_token as string, post_logout_redirect_uri: LOGGED_OUT, state: 'bye-1' })
  const res = await browser.get(`/oauth2/end-session?${query.toString()}`)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${LOGGED_OUT}?state=bye-1`)
  t.equal(browser.jar.has('access_token'), false, 'the portal cookies cleared')
  const me = await flow.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${portalAccess}` } })
  t.equal(me.json().code, 'token_revoked', 'the portal session is over')
  // the child session was not the one ended (a local logout of its parent)
  t.equal((await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${tokens.access_token as string}` } })).statusCode, 200)
})

t.test('without a matching hint: the sign-out page, whose form posts back; an unregistered post_logout_redirect_uri goes to the signed-out page', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { post_logout_redirect_uris: [LOGGED_OUT] })
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const page = await browser.get(`/oauth2/end-session?client_id=web-app&post_logout_redirect_uri=${encodeURIComponent(LOGGED_OUT)}&state=s2`)
  t.equal(page.statusCode, 200)
  t.match(page.headers, { ...PAGE_HEADERS, 'content-security-policy': /form-action 'self' https:\/\/app\.example/ })
  t.match(page.body, 'App web-app')
  t.match(page.body, `action="${ISSUER}/oauth2/end-session"`)
  t.equal(fieldValue(page.body, 'post_logout_redirect_uri'), LOGGED_OUT)
  t.equal(browser.jar.has('access_token'), true, 'nothing ended by the GET')
  const forged = await browser.post('/oauth2/end-session', { client_id: 'web-app', csrf: 'y'.repeat(43) })
  t.equal(forged.statusCode, 403)
  const done = await browser.post('/oauth2/end-session', { client_id: 'web-app', post_logout_redirect_uri: LOGGED_OUT, state: 's2', scope: 'local' })
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, `${LOGGED_OUT}?state=s2`)
  t.equal(browser.jar.has('access_token'), false)
  // a URI the client did not register (one character off), or no client: the signed-out page
  for (const uri of [`${LOGGED_OUT}/`, 'https://evil.example/bye']) {
    const again = await signedIn(flow, { email: 'ann@example.com' })
    const res = await again.post('/oauth2/end-session', { client_id: 'web-app', post_logout_redirect_uri: uri })
    t.equal(res.headers.location, SIGNED_OUT, uri)
  }
  // a hint that is not ours: the confirm page, nothing ended
  const other = await signedIn(flow, { email: 'ann@example.com' })
  const forgedHint = await other.get('/oauth2/end-session?id_token_hint=eyJhbGciOiJub25lIn0.eyJzaWQiOiJ4In0.')
  t.equal(forgedHint.statusCode, 200)
  t.equal(other.jar.has('access_token'), true)
})
