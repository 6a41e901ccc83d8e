import t from 'tap'
import { authHeader, changePassword, login, PASSWORD } from '../../helper.js'
import { addClient, codeFor, exchange, flowApp, payloadOf, person, pkce, signedIn, type Flow } from './flow-support.js'
import type { PageClient } from '../portal/support.js'

/* Child sessions (§15.1, src/oidc/child-sessions.ts): listed with client_id and client_name, and every way one ends — or does not. */

async function authorizeIn (flow: Flow, browser: PageClient, clientId: string): Promise<string> {
  const p = pkce()
  return ((await exchange(flow, clientId, await codeFor(flow, browser, clientId, p), p)).json() as { access_token: string }).access_token
}

const live = async (flow: Flow, access: string): Promise<number> => (await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${access}` } })).statusCode

t.test('GET /api/auth/sessions lists child sessions with client_id and client_name (null on others)', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { name: 'The Web App' })
  const user = await person(flow, 'ann@example.com')
  const browser = await signedIn(flow, user)
  const access = await authorizeIn(flow, browser, 'web-app')
  const own = await login(flow.app, user)
  const list = (await flow.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(own.access_token) })).json() as { data: Array<Record<string, unknown>> }
  t.equal(list.data.length, 3)
  const child = list.data.find((s) => s.client_id !== null)
  t.match(child, { id: payloadOf(access).session_id, client_id: 'web-app', client_name: 'The Web App', current: false, aal: 'aal1', amr: ['pwd'] })
  t.same(list.data.filter((s) => s.client_id === null).map((s) => s.client_name), [null, null])
  // an admin's listing shows them too
  const admin = (await flow.app.inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: flow.admin })).json() as { data: Array<Record<string, unknown>> }
  t.equal(admin.data.filter((s) => s.client_id === 'web-app').length, 1)
})

t.test('a local logout of the parent leaves the child; logout scope=global ends it', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { skip_consent: true })
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const access = await authorizeIn(flow, browser, 'web-app')
  t.equal((await browser.post('/portal/logout', { scope: 'local' })).statusCode, 303)
  t.equal(await live(flow, access), 200, 'not on a local logout of its parent')
  const again = await signedIn(flow, { email: 'ann@example.com' })
  t.equal((await again.post('/portal/logout', { scope: 'global' })).statusCode, 303)
  t.equal(await live(flow, access), 401, 'logout scope=global')
})

t.test('a password change, a role removal, the user\'s deletion end child sessions', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { skip_consent: true })
  const user = await person(flow, 'ann@example.com', ['user', 'staff'])
  const first = await authorizeIn(flow, await signedIn(flow, user), 'web-app')
  const own = await login(flow.app, user)
  t.equal((await changePassword(flow.app, own.access_token, PASSWORD, 'Another-Horse-7')).statusCode, 200)
  t.equal(await live(flow, first), 401, 'password change')
  const second = await authorizeIn(flow, await signedIn(flow, { email: user.email, password: 'Another-Horse-7' }), 'web-app')
  t.equal(await live(flow, second), 200)
  t.equal((await flow.app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: flow.admin, payload: { roles: ['user'] } })).statusCode, 200)
  t.equal(await live(flow, second), 401, 'role removal')
  const third = await authorizeIn(flow, await signedIn(flow, { email: user.email, password: 'Another-Horse-7' }), 'web-app')
  t.equal((await flow.app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: flow.admin })).statusCode, 204)
  t.equal(await live(flow, third), 401, 'deletion')
})

t.test('the grant\'s revocation (API and account page), the client\'s disabling or deletion end child sessions', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { name: 'Web' })
  await addClient(flow, 'other-app')
  const user = await person(flow, 'ann@example.com')
  const browser = await signedIn(flow, user)
  const web = await authorizeIn(flow, browser, 'web-app')
  const other = await authorizeIn(flow, browser, 'other-app')
  const own = await login(flow.app, user)
  t.equal((await flow.app.inject({ method: 'DELETE', url: '/api/auth/grants/web-app', headers: authHeader(own.access_token) })).statusCode, 204)
  t.equal(await live(flow, web), 401, 'grant revoked')
  t.equal(await live(flow, other), 200, "another client's session untouched")
  // the account page lists the apps and revokes one
  const account = await browser.get('/portal/account')
  t.match(account.body, '<h2>Authorized apps</h2>')
  t.match(account.body, 'App other-app')
  t.notMatch(account.body, '<strong>Web</strong>')
  const revoked = await browser.post('/portal/account/revoke-app', { client_id: 'other-app' })
  t.equal(revoked.statusCode, 303)
  t.match(revoked.headers.location, '/portal/account?done=revoke-app')
  t.equal(await live(flow, other), 401, 'revoked from the account page')
  const again = await authorizeIn(flow, browser, 'web-app')
  t.equal((await flow.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: flow.admin, payload: { disabled: true } })).statusCode, 200)
  t.equal(await live(flow, again), 401, 'client disabled')
  const last = await authorizeIn(flow, browser, 'other-app')
  t.equal((await flow.app.inject({ method: 'DELETE', url: '/api/oauth2/clients/other-app', headers: flow.admin })).statusCode, 204)
  t.equal(await live(flow, last), 401, 'client deleted')
})
