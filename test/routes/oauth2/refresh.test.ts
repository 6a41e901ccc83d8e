import t from 'tap'
import { addClient, codeFor, exchange, flowApp, payloadOf, person, pkce, signedIn, token, type Flow } from './flow-support.js'

/* grant refresh_token (src/oidc/child-sessions.ts): only with offline_access and the grant type; §3's rotation, grace and reuse; allowed_roles and SESSION_MAX_AGE. */

const OFFLINE = { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'email', 'offline_access'] }

async function tokensFor (flow: Flow, clientId: string, email: string, scope = 'openid email offline_access'): Promise<Record<string, string>> {
  const browser = await signedIn(flow, await person(flow, email))
  const p = pkce()
  return (await exchange(flow, clientId, await codeFor(flow, browser, clientId, p, { scope, nonce: 'n-1' }), p)).json() as Record<string, string>
}

const userinfo = async (flow: Flow, access: string) => await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${access}` } })

t.test('a refresh token only with offline_access and the grant type', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'offline-app', OFFLINE)
  await addClient(flow, 'online-app', { scopes: ['openid', 'email', 'offline_access'] })
  t.type((await tokensFor(flow, 'offline-app', 'a@example.com')).refresh_token, 'string')
  t.equal((await tokensFor(flow, 'offline-app', 'b@example.com', 'openid email')).refresh_token, undefined, 'no offline_access')
  t.equal((await tokensFor(flow, 'online-app', 'c@example.com')).refresh_token, undefined, 'no refresh_token grant')
})

t.test('rotation: new tokens, a new ID token without nonce; the spent token within the grace interval gets the same successor; after it, reuse ends the session', async (t) => {
  const flow = await flowApp(t, { REFRESH_REUSE_INTERVAL: '1s' })
  await addClient(flow, 'offline-app', OFFLINE)
  const first = await tokensFor(flow, 'offline-app', 'ann@example.com')
  t.equal(payloadOf(first.id_token as string).nonce, 'n-1')
  const rotated = await token(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, 'offline-app')
  t.equal(rotated.statusCode, 200)
  t.equal(rotated.headers['cache-control'], 'no-store')
  const second = rotated.json() as Record<string, string>
  t.strictSame(Object.keys(second).sort(), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
  t.not(second.refresh_token, first.refresh_token)
  const id = payloadOf(second.id_token as string)
  t.equal(id.nonce, undefined, 'no nonce on a refresh')
  t.equal(id.sid, payloadOf(first.id_token as string).sid)
  t.equal(id.auth_time, payloadOf(first.id_token as string).auth_time)
  t.equal(payloadOf(second.access_token as string).session_id, payloadOf(first.access_token as string).session_id, 'the same child session')
  // two tabs racing: the spent one again, within the grace interval
  const raced = (await token(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, 'offline-app')).json() as Record<string, string>
  t.equal(raced.refresh_token, second.refresh_token)
  t.equal((await userinfo(flow, second.access_token as string)).statusCode, 200)
  // after it: theft, the whole child session ends
  await new Promise((resolve) => setTimeout(resolve, 1200))
  const reused = await token(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, 'offline-app')
  t.equal(reused.statusCode, 400)
  t.strictSame(reused.json(), { error: 'invalid_grant', error_description: 'The refresh token was already used.' })
  t.equal((await userinfo(flow, second.access_token as string)).json().code, 'token_revoked')
  t.strictSame((await token(flow, { grant_type: 'refresh_token', refresh_token: second.refresh_token as string }, 'offline-app')).json(), { error: 'invalid_grant', error_description: 'The session has ended.' })
})

t.test("another client's refresh token, a user no longer in allowed_roles: invalid_grant, the session ended", async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'staff-app', { ...OFFLINE, allowed_roles: ['staff'], skip_consent: true })
  await addClient(flow, 'other-app', OFFLINE)
  const user = await person(flow, 'staff@example.com', ['user', 'staff'])
  const browser = await signedIn(flow, user)
  const p = pkce()
  const tokens = (await exchange(flow, 'staff-app', await codeFor(flow, browser, 'staff-app', p, { scope: 'openid offline_access' }), p)).json() as Record<string, string>
  t.strictSame((await token(flow, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }, 'other-app')).json(), { error: 'invalid_grant', error_description: 'The refresh token was issued to another client.' })
  // allowed_roles changes (the user keeps their roles): the next refresh ends the session
  const changed = await flow.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/staff-app', headers: flow.admin, payload: { allowed_roles: ['auditor'] } })
  t.equal(changed.statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.strictSame((await token(flow, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }, 'staff-app')).json(), { error: 'invalid_grant', error_description: 'The user may no longer use this client.' })
  t.equal((await userinfo(flow, tokens.access_token as string)).json().code, 'token_revoked')
})

t.test('no child session outlives auth_time + SESSION_MAX_AGE', async (t) => {
  const flow = await flowApp(t, { SESSION_MAX_AGE: '3s', ACCESS_TOKEN_TTL: '2s' })
  await addClient(flow, 'offline-app', OFFLINE)
  const tokens = await tokensFor(flow, 'offline-app', 'ann@example.com')
  const refresh = payloadOf(tokens.refresh_token as string)
  const access = payloadOf(tokens.access_token as string)
  t.ok((refresh.exp as number) <= (access.auth_time as number) + 3, 'the refresh token ends with the sign-in')
  t.ok((access.exp as number) <= (access.auth_time as number) + 3, 'so does the access token')
  await new Promise((resolve) => setTimeout(resolve, 3100))
  t.equal((await token(flow, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }, 'offline-app')).json().error, 'invalid_grant')
})
