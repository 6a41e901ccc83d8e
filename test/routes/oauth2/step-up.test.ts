import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { claimsOf, PASSWORD } from '../../helper.js'
import type { Twist } from '../../webauthn-authenticator.js'
import { oathtool } from '../auth/two-factor/support.js'
import { totpPortalApp } from '../portal/steps-support.js'
import { postAssertion, PORTAL_PASSKEYS, withPasskey } from '../portal/passkey-support.js'
import { fieldValue, PageClient } from '../portal/support.js'
import { enrolledUser } from '../auth/two-factor/support.js'
import { addClient, authorizeUrl, exchange, FLOW, flowApp, ISSUER, payloadOf, person, pkce, queryOf, REDIRECT, signedIn, type Flow } from './flow-support.js'

/*
 * require_aal2 (src/oidc/authorizer.ts): an aal1 session signs in again with a second factor
 * (TOTP through /portal/2fa, or a user-verified passkey on the sign-in page), else access_denied.
 */

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

/**
 * A user with a password and a passkey, signed in to the portal with the password (aal1): authorize
 * for a require_aal2 client sends the browser to sign in again, where it signs in with the passkey
 * (its assertion made with `twist`), the portal's new session's claims checked against `strength`.
 * Returns authorize's answer after it.
 */
async function passkeyStepUp (t: Test, values: Record<string, unknown>, twist: Twist, strength: { aal: string, amr: string[] }): Promise<{ flow: Flow, userId: string, back: LightMyRequestResponse }> {
  const flow = await flowApp(t, { ...PORTAL_PASSKEYS, ...values })
  await addClient(flow, 'vault-app', { require_aal2: true, skip_consent: true })
  const user = await person(flow, 'ann@example.com')
  const authenticator = await withPasskey(flow.app, user)
  const browser = await signedIn(flow, user)
  t.match(claimsOf(browser.jar.get('access_token') ?? ''), { user_id: user.id, aal: 'aal1', amr: ['pwd'] }, 'the password alone: aal1')
  const asked = await browser.get(authorizeUrl('vault-app', p.challenge))
  t.equal(asked.statusCode, 303)
  const interaction = /interaction%3D([A-Za-z0-9_-]+)&/.exec(String(asked.headers.location))?.[1] ?? ''
  const resume = `/oauth2/authorize?interaction=${interaction}`
  t.equal(asked.headers.location, `${ISSUER}/portal/login?rd=${encodeURIComponent(resume)}&prompt=login`)
  const page = await browser.get(asked.headers.location as string)
  t.equal(page.statusCode, 200)
  t.equal(fieldValue(page.body, 'rd'), `${ISSUER}${resume}`)
  const passkey = await postAssertion(browser, flow.app, authenticator, fieldValue(page.body, 'rd'), twist)
  t.equal(passkey.statusCode, 303)
  t.equal(passkey.headers.location, `${ISSUER}${resume}`)
  t.match(claimsOf(browser.jar.get('access_token') ?? ''), { user_id: user.id, ...strength }, 'the portal session is the passkey\'s now')
  return { flow, userId: user.id, back: await browser.get(resume) }
}

t.test('a require_aal2 client: aal1 password session → sign-in with a user-verified passkey → code, ID token acr aal2, amr pop mfa', async (t) => {
  const { flow, userId, back } = await passkeyStepUp(t, {}, {}, { aal: 'aal2', amr: ['pop', 'mfa'] })
  t.equal(back.statusCode, 302)
  const { code, ...rest } = queryOf(back)
  t.match(code, /^[A-Za-z0-9_-]{40,}$/)
  t.strictSame(rest, { state: 'st-1', iss: ISSUER })
  t.equal(back.headers.location, `${REDIRECT}?${new URLSearchParams({ code: code ?? '', state: 'st-1', iss: ISSUER }).toString()}`)
  const tokens = await exchange(flow, 'vault-app', code ?? '', p)
  t.equal(tokens.statusCode, 200)
  t.match(payloadOf(tokens.json().id_token as string), { iss: ISSUER, sub: userId, aud: 'vault-app', acr: 'aal2' })
  t.strictSame(payloadOf(tokens.json().id_token as string).amr, ['pop', 'mfa'])
})

t.test('the negative control: a passkey without user verification (WEBAUTHN_USER_VERIFICATION=preferred) is one factor, aal1 → access_denied', async (t) => {
  const { back } = await passkeyStepUp(t, { WEBAUTHN_USER_VERIFICATION: 'preferred' }, { uv: false }, { aal: 'aal1', amr: ['pop'] })
  t.equal(back.statusCode, 302)
  t.strictSame(queryOf(back), { error: 'access_denied', error_description: 'This application needs a sign-in with a second factor.', state: 'st-1', iss: ISSUER })
  t.ok((back.headers.location as string).startsWith(`${REDIRECT}?`))
})
