import t from 'tap'
import { PASSWORD } from '../../helper.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient } from '../portal/support.js'
import { addClient, authorizeUrl, flowApp, ISSUER, person, pkce, queryOf, REDIRECT, signedIn } from './flow-support.js'

/* §15.1 steps 3 and 4 (src/oidc/authorizer.ts, routes/portal/consent.ts): the portal session, the sign-in interaction, allowed_roles, consent. */

const p = pkce()
const interactionOf = (location: string): string => new URL(location).searchParams.get('interaction') ?? new URL(new URL(location).searchParams.get('rd') ?? '', ISSUER).searchParams.get('interaction') ?? ''

t.test('no portal session: the sign-in page with an interaction, login_hint prefilled; back, consent, Deny and Allow', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app')
  const user = await person(flow, 'ann@example.com')
  const browser = new PageClient(flow.app)
  const first = await browser.get(authorizeUrl('web-app', p.challenge, { login_hint: 'ann@example.com' }))
  t.equal(first.statusCode, 303)
  const login = new URL(first.headers.location as string)
  t.equal(`${login.origin}${login.pathname}`, `${ISSUER}/portal/login`)
  const rd = login.searchParams.get('rd') as string
  t.match(rd, /^\/oauth2\/authorize\?interaction=[A-Za-z0-9_-]{43}$/)
  t.equal(login.searchParams.get('login_hint'), 'ann@example.com')
  // the sign-in page shows the email prefilled
  const page = await browser.get(first.headers.location as string)
  t.equal(page.statusCode, 200)
  t.equal(fieldValue(page.body, 'email'), 'ann@example.com')
  // the interaction is stored only as a keyed hash
  const id = interactionOf(first.headers.location as string)
  const rows = await flow.app.store.oauthInteractions.findLive([id], new Date().toISOString())
  t.equal(rows, undefined, 'the id itself is not what is stored')
  // sign in: back to the interaction, then to consent
  const signIn = await browser.post('/portal/login', { email: user.email, password: PASSWORD, rd: fieldValue(page.body, 'rd') as string })
  t.equal(signIn.statusCode, 303)
  t.equal(signIn.headers.location, `${ISSUER}${rd}`)
  const resumed = await browser.get(rd)
  t.equal(resumed.statusCode, 303)
  t.match(resumed.headers.location, `${ISSUER}/portal/consent?interaction=`)
  // the login interaction is used once
  const again = await browser.get(rd)
  t.equal(again.statusCode, 400)
  t.equal(alertCode(again.body), 'invalid_request')
  // the consent page: the client's name, the scopes in words, Allow / Deny; the portal's headers, form-action the redirect_uri's origin
  const consentUrl = resumed.headers.location as string
  const consent = await browser.get(consentUrl)
  t.equal(consent.statusCode, 200)
  t.match(consent.body, 'App web-app')
  t.match(consent.body, 'See your email address')
  t.match(consent.body, 'See your name')
  t.match(consent.body, /value="allow">Allow<\/button>/)
  t.match(consent.body, /value="deny"[^>]*>Deny<\/button>/)
  t.match(consent.headers, { ...PAGE_HEADERS, 'content-security-policy': /form-action 'self' https:\/\/app\.example/ })
  // a form without the CSRF token is refused
  const forged = await browser.post('/portal/consent', { interaction: interactionOf(consentUrl), decision: 'allow', csrf: 'x'.repeat(43) })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const denied = await browser.post('/portal/consent', { interaction: interactionOf(consentUrl), decision: 'deny' })
  t.equal(denied.statusCode, 303)
  t.strictSame(queryOf(denied), { error: 'access_denied', error_description: 'The user denied the request.', state: 'st-1', iss: ISSUER })
  // the consent interaction is spent too
  t.equal((await browser.post('/portal/consent', { interaction: interactionOf(consentUrl), decision: 'allow' })).statusCode, 400)
  // a new request, allowed: the code, state and iss on the redirect_uri
  const second = await browser.get(authorizeUrl('web-app', p.challenge))
  const allowed = await browser.post('/portal/consent', { interaction: interactionOf(second.headers.location as string), decision: 'allow' })
  t.equal(allowed.statusCode, 303)
  const q = queryOf(allowed)
  t.strictSame(Object.keys(q), ['code', 'state', 'iss'])
  t.match(q.code, /^[A-Za-z0-9_-]{43}$/)
  t.equal(new URL(allowed.headers.location as string).origin + new URL(allowed.headers.location as string).pathname, REDIRECT)
  // the grant now covers these scopes: no consent page, a 302 with the code
  const covered = await browser.get(authorizeUrl('web-app', p.challenge))
  t.equal(covered.statusCode, 302)
  t.ok(queryOf(covered).code)
  // prompt=consent asks again; prompt=none with a grant answers at once
  t.match((await browser.get(authorizeUrl('web-app', p.challenge, { prompt: 'consent' }))).headers.location, '/portal/consent?')
  t.ok(queryOf(await browser.get(authorizeUrl('web-app', p.challenge, { prompt: 'none' }))).code)
  // more scopes than granted: consent again, and under prompt=none consent_required
  await addClient(flow, 'wide-app', { scopes: ['openid', 'profile', 'email', 'roles'] })
  t.equal(queryOf(await browser.get(authorizeUrl('wide-app', p.challenge, { prompt: 'none' }))).error, 'consent_required')
  // the audit trail has the authorization
  await flow.app.auditTrail.flush()
  const audit = await flow.app.inject({ method: 'GET', url: '/api/audit?event=oidc_authorized', headers: flow.admin })
  t.equal((audit.json() as { data: unknown[] }).data.length, 3)
})

t.test('prompt=none without a session: login_required; prompt=login and max_age=0 send a signed-in browser to sign in again', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { skip_consent: true })
  const anonymous = new PageClient(flow.app)
  t.strictSame(queryOf(await anonymous.get(authorizeUrl('web-app', p.challenge, { prompt: 'none' }))), { error: 'login_required', error_description: 'The user must sign in.', state: 'st-1', iss: ISSUER })
  const user = await person(flow, 'ann@example.com')
  const browser = await signedIn(flow, user)
  // skip_consent and a session: straight to the client
  t.equal((await browser.get(authorizeUrl('web-app', p.challenge))).statusCode, 302)
  for (const extra of [{ prompt: 'login' }, { max_age: '0' }]) {
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const res = await browser.get(authorizeUrl('web-app', p.challenge, extra))
    t.equal(res.statusCode, 303, JSON.stringify(extra))
    const login = new URL(res.headers.location as string)
    t.equal(login.pathname, '/portal/login')
    t.equal(login.searchParams.get('prompt'), 'login', 'the sign-in page shows the form, no silent refresh')
    const rd = login.searchParams.get('rd') as string
    // coming back without signing in again: the session is older than the interaction, so back to the sign-in page
    const early = await browser.get(rd)
    t.equal(early.statusCode, 303)
    t.equal(new URL(early.headers.location as string).pathname, '/portal/login')
    const page = await browser.get(res.headers.location as string)
    t.equal(page.statusCode, 200, 'the form, not a silent refresh')
    await browser.post('/portal/login', { email: user.email, password: PASSWORD, rd: fieldValue(page.body, 'rd') as string })
    const done = await browser.get(rd)
    t.equal(done.statusCode, 302)
    t.ok(queryOf(done).code, JSON.stringify(extra))
  }
  // max_age=0 under prompt=none: login_required
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal(queryOf(await browser.get(authorizeUrl('web-app', p.challenge, { max_age: '0', prompt: 'none' }))).error, 'login_required')
  // a long max_age is met
  t.equal((await browser.get(authorizeUrl('web-app', p.challenge, { max_age: '3600' }))).statusCode, 302)
})

t.test('allowed_roles: a user outside them gets access_denied; one of the roles or a superuser passes', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'staff-app', { allowed_roles: ['staff'], skip_consent: true })
  const outsider = await signedIn(flow, await person(flow, 'out@example.com', ['user']))
  t.strictSame(queryOf(await outsider.get(authorizeUrl('staff-app', p.challenge))), { error: 'access_denied', error_description: 'Your account may not use this application.', state: 'st-1', iss: ISSUER })
  const staff = await signedIn(flow, await person(flow, 'staff@example.com', ['user', 'staff']))
  t.ok(queryOf(await staff.get(authorizeUrl('staff-app', p.challenge))).code)
  const root = await signedIn(flow, { email: 'root@example.com' })
  t.ok(queryOf(await root.get(authorizeUrl('staff-app', p.challenge))).code, 'superusers always')
})

t.test('an unknown interaction and a consent of another session are 400 pages', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app')
  const ann = await signedIn(flow, await person(flow, 'ann@example.com'))
  const bob = await signedIn(flow, await person(flow, 'bob@example.com'))
  t.equal(alertCode((await ann.get('/oauth2/authorize?interaction=nonsense')).body), 'invalid_request')
  const asked = await ann.get(authorizeUrl('web-app', p.challenge))
  const interaction = interactionOf(asked.headers.location as string)
  const stolen = await bob.get(`/portal/consent?interaction=${interaction}`)
  t.equal(stolen.statusCode, 400)
  t.equal((await bob.post('/portal/consent', { interaction, decision: 'allow' })).statusCode, 400)
  // still good for its own session
  t.equal((await ann.post('/portal/consent', { interaction, decision: 'allow' })).statusCode, 303)
})
