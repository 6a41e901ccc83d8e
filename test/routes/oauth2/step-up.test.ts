import t from 'tap'
import { PASSWORD } from '../../helper.js'
import { oathtool } from '../auth/two-factor/support.js'
import { totpPortalApp } from '../portal/steps-support.js'
import { fieldValue, PageClient } from '../portal/support.js'
import { enrolledUser } from '../auth/two-factor/support.js'
import { authorizeUrl, FLOW, ISSUER, payloadOf, pkce, queryOf, REDIRECT } from './flow-support.js'

/* require_aal2 (§15.1 step 3, src/oidc/authorizer.ts): an aal1 session signs in again with a second factor (TOTP through /portal/2fa), else access_denied. */

const p = pkce()

t.test('a require_aal2 client: aal1 session → sign-in with TOTP → code with acr aal2; without a second factor → access_denied', async (t) => {
  const { DATA_ENCRYPTION_KEYS: _own, ...provider } = FLOW
  const app = await totpPortalApp(t, provider)
  const admin = await enrolledUser(app, { email: 'root@example.com', isSuperuser: true, roles: ['admin'] })
  const created = await app.inject({ method: 'POST', url: '/api/oauth2/clients', headers: { authorization: `Bearer ${admin.access_token}` }, payload: { client_id: 'vault-app', name: 'Vault', type: 'public', redirect_uris: [REDIRECT], require_aal2: true, skip_consent: true } })
  t.equal(created.statusCode, 201)
  const user = await enrolledUser(app, { email: 'ann@example.com' })
  // an aal1 portal session: the password alone, as a user without TOTP would have; here a TOTP user signs in with the password first
  const browser = new PageClient(app)
  await browser.get('/portal/login')
  const first = await browser.post('/portal/login', { email: user.email, password: PASSWORD })
  t.equal(first.headers.location, `${ISSUER}/portal/2fa`, 'a TOTP user is asked the second factor')
  t.equal((await browser.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })).statusCode, 303)
  app.testClock.now += 30_000
  // that session is aal2: the client is served at once
  const direct = await browser.get(authorizeUrl('vault-app', p.challenge))
  t.equal(direct.statusCode, 302)
  const token = await app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'vault-app', code: queryOf(direct).code ?? '', redirect_uri: REDIRECT, code_verifier: p.verifier }).toString() })
  t.equal(token.statusCode, 200)
  t.equal(payloadOf(token.json().id_token as string).acr, 'aal2')
  t.strictSame(payloadOf(token.json().id_token as string).amr, ['pwd', 'otp', 'mfa'])

  // a user without a second factor: aal1, sent to sign in, and refused after it
  const plain = await app.inject({ method: 'POST', url: '/api/users', headers: { authorization: `Bearer ${admin.access_token}` }, payload: { email: 'bob@example.com', name: 'Bob Example', password: PASSWORD } })
  t.equal(plain.statusCode, 201)
  const bob = new PageClient(app)
  await bob.get('/portal/login')
  await bob.post('/portal/login', { email: 'bob@example.com', password: PASSWORD })
  const weak = await bob.get(authorizeUrl('vault-app', p.challenge))
  t.equal(weak.statusCode, 303)
  const login = new URL(weak.headers.location as string)
  t.equal(login.pathname, '/portal/login')
  t.equal(queryOf(await bob.get(authorizeUrl('vault-app', p.challenge, { prompt: 'none' }))).error, 'login_required')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const page = await bob.get(weak.headers.location as string)
  await bob.post('/portal/login', { email: 'bob@example.com', password: PASSWORD, rd: fieldValue(page.body, 'rd') as string })
  const refused = await bob.get(login.searchParams.get('rd') as string)
  t.strictSame(queryOf(refused), { error: 'access_denied', error_description: 'This application needs a sign-in with a second factor.', state: 'st-1', iss: ISSUER })

  // step-up through the interaction: a browser without a session signs in with the password, then TOTP, and comes back aal2
  const ann = new PageClient(app)
  const asked = await ann.get(authorizeUrl('vault-app', p.challenge))
  t.equal(new URL(asked.headers.location as string).pathname, '/portal/login')
  const annPage = await ann.get(asked.headers.location as string)
  const pw = await ann.post('/portal/login', { email: user.email, password: PASSWORD, rd: fieldValue(annPage.body, 'rd') as string })
  t.equal(pw.headers.location, `${ISSUER}/portal/2fa`)
  const second = await ann.post('/portal/2fa', { code: oathtool(user.secret, app.testClock.now) })
  t.equal(second.statusCode, 303)
  const back = await ann.get(second.headers.location as string)
  t.equal(back.statusCode, 302)
  t.ok(queryOf(back).code)
})
