import { createLocalJWKSet, jwtVerify } from 'jose'
import t from 'tap'
import { addClient, basicOf, codeFor, exchange, flowApp, ISSUER, payloadOf, person, pkce, signedIn, token, type Flow } from './flow-support.js'

/* client_credentials (§17, routes/oauth2/token.ts), /oauth2/userinfo (routes/oauth2/userinfo.ts), /oauth2/revoke (RFC 7009), /oauth2/introspect (RFC 7662). */

async function form (flow: Flow, url: string, fields: Record<string, string>, clientId?: string) {
  return await flow.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...(clientId !== undefined && { authorization: basicOf(flow, clientId) }) }, payload: new URLSearchParams(fields).toString() })
}

async function userTokens (flow: Flow, clientId: string, email: string, scope = 'openid profile email'): Promise<Record<string, string>> {
  const browser = await signedIn(flow, await person(flow, email))
  const p = pkce()
  return (await exchange(flow, clientId, await codeFor(flow, browser, clientId, p, { scope }), p)).json() as Record<string, string>
}

t.test('client_credentials: kind client, the client\'s roles, scopes without openid/offline_access, aud JWT_AUDIENCE or the client id; refused by /api and /auth/verify', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'robot', { grant_types: ['client_credentials'], roles: ['reporter'], scopes: ['openid', 'profile', 'roles', 'offline_access'] })
  const res = await token(flow, { grant_type: 'client_credentials' }, 'robot')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as Record<string, unknown>
  t.strictSame(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type'], 'no refresh or ID token')
  t.equal(body.scope, 'profile roles')
  t.equal(body.expires_in, 900)
  const jwks = createLocalJWKSet((await flow.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json())
  const { payload } = await jwtVerify(body.access_token as string, jwks, { issuer: ISSUER, audience: 'robot', typ: 'at+jwt' })
  t.match(payload, { sub: 'robot', client_id: 'robot', roles: ['reporter'], kind: 'client', scope: 'profile roles', aud: 'robot' })
  t.equal((payload.exp as number) - (payload.iat as number), 900)
  t.equal((await token(flow, { grant_type: 'client_credentials', scope: 'roles' }, 'robot')).json().scope, 'roles')
  for (const scope of ['openid', 'offline_access', 'email']) {
    t.strictSame((await token(flow, { grant_type: 'client_credentials', scope }, 'robot')).json(), { error: 'invalid_scope', error_description: 'The client may not ask for one of these scopes.' }, scope)
  }
  for (const url of ['/auth/me', '/auth/verify', '/api/users']) {
    const refused = await flow.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${body.access_token as string}` } })
    t.equal(refused.statusCode, 401, url)
    t.equal(refused.json().code, 'token_invalid', url)
  }
  t.equal((await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${body.access_token as string}` } })).json().code, 'token_invalid', 'no openid, no user: not for userinfo')
  // introspected active, then inactive within a second of the client's disabling
  await addClient(flow, 'resource', {})
  t.match((await form(flow, '/oauth2/introspect', { token: body.access_token as string }, 'resource')).json(), { active: true, client_id: 'robot', sub: 'robot', token_type: 'Bearer' })
  t.equal((await flow.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/robot', headers: flow.admin, payload: { disabled: true } })).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.strictSame((await form(flow, '/oauth2/introspect', { token: body.access_token as string }, 'resource')).json(), { active: false })
})

t.test('client_credentials with JWT_AUDIENCE: aud is it', async (t) => {
  const flow = await flowApp(t, { JWT_AUDIENCE: 'https://api.example' })
  await addClient(flow, 'robot', { grant_types: ['client_credentials'] })
  t.equal(payloadOf((await token(flow, { grant_type: 'client_credentials' }, 'robot')).json().access_token as string).aud, 'https://api.example')
})

t.test('userinfo: GET and POST, the claims of the granted scopes; RFC 6750 challenges with §5 bodies', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { scopes: ['openid', 'profile', 'email', 'roles'] })
  const full = await userTokens(flow, 'web-app', 'ann@example.com', 'openid profile email roles')
  const sub = payloadOf(full.access_token as string).sub
  for (const method of ['GET', 'POST'] as const) {
    const res = await flow.app.inject({ method, url: '/oauth2/userinfo', headers: { authorization: `Bearer ${full.access_token as string}` } })
    t.equal(res.statusCode, 200, method)
    t.equal(res.headers['cache-control'], 'no-store')
    t.strictSame(res.json(), { sub, email: 'ann@example.com', email_verified: false, name: 'Test User', roles: ['user'] }, method)
  }
  const narrow = await userTokens(flow, 'web-app', 'bob@example.com', 'openid')
  t.strictSame((await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${narrow.access_token as string}` } })).json(), { sub: payloadOf(narrow.access_token as string).sub })
  const missing = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo' })
  t.equal(missing.statusCode, 401)
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.strictSame(missing.json(), { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' })
  for (const [name, bearer] of [['an ID token', full.id_token], ['garbage', 'abc.def.ghi']] as const) {
    const res = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${bearer as string}` } })
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().code, 'token_invalid', name)
    t.match(res.headers['www-authenticate'], /^Bearer realm="gatehouse", error="invalid_token"/, name)
  }
})

t.test('revoke: 200 for an unknown or another client\'s token (untouched); the client\'s own access or refresh token ends its child session', async (t) => {
  const flow = await flowApp(t)
  const offline = { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'] }
  await addClient(flow, 'app-a', offline)
  await addClient(flow, 'app-b', offline)
  const a = await userTokens(flow, 'app-a', 'ann@example.com', 'openid offline_access')
  const live = async (access: string) => (await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${access}` } })).statusCode
  const unknown = await form(flow, '/oauth2/revoke', { token: 'not-a-token' }, 'app-a')
  t.equal(unknown.statusCode, 200)
  t.equal(unknown.body, '')
  t.equal((await form(flow, '/oauth2/revoke', { token: a.access_token as string }, 'app-b')).statusCode, 200)
  t.equal((await form(flow, '/oauth2/revoke', { token: a.refresh_token as string }, 'app-b')).statusCode, 200)
  t.equal(await live(a.access_token as string), 200, "another client's revocation left it untouched")
  t.equal((await form(flow, '/oauth2/revoke', { token: a.access_token as string }, 'app-a')).statusCode, 200)
  t.equal(await live(a.access_token as string), 401, 'its own access token: the session ended')
  t.equal((await token(flow, { grant_type: 'refresh_token', refresh_token: a.refresh_token as string }, 'app-a')).json().error, 'invalid_grant')
  const second = await userTokens(flow, 'app-a', 'bob@example.com', 'openid offline_access')
  t.equal((await form(flow, '/oauth2/revoke', { token: second.refresh_token as string, token_type_hint: 'refresh_token' }, 'app-a')).statusCode, 200)
  t.equal(await live(second.access_token as string), 401, 'its own refresh token: the session ended')
  // errors are §5.2's
  t.strictSame((await form(flow, '/oauth2/revoke', {}, 'app-a')).json(), { error: 'invalid_request', error_description: 'The token parameter is required.' })
  t.equal((await form(flow, '/oauth2/revoke', { token: 'x' })).statusCode, 401)
})

t.test('introspect: confidential clients only; any token gatehouse issued, active or not', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'] })
  await addClient(flow, 'resource')
  await addClient(flow, 'spa', { type: 'public' })
  const tokens = await userTokens(flow, 'web-app', 'ann@example.com', 'openid offline_access')
  const claims = payloadOf(tokens.access_token as string)
  const active = await form(flow, '/oauth2/introspect', { token: tokens.access_token as string }, 'resource')
  t.equal(active.statusCode, 200)
  t.equal(active.headers['cache-control'], 'no-store')
  t.strictSame(active.json(), { active: true, scope: 'openid offline_access', client_id: 'web-app', sub: claims.sub, exp: claims.exp, iat: claims.iat, iss: ISSUER, aud: 'web-app', token_type: 'Bearer' })
  t.match((await form(flow, '/oauth2/introspect', { token: tokens.refresh_token as string }, 'resource')).json(), { active: true, client_id: 'web-app', token_type: 'refresh_token' })
  const own = (await flow.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ann@example.com', password: 'Correct-Horse-9' } })).json() as Record<string, string>
  t.match((await form(flow, '/oauth2/introspect', { token: own.access_token as string }, 'resource')).json(), { active: true, sub: claims.sub, token_type: 'Bearer' })
  for (const bad of ['garbage', tokens.id_token as string]) t.strictSame((await form(flow, '/oauth2/introspect', { token: bad }, 'resource')).json(), { active: false })
  const spa = await flow.app.inject({ method: 'POST', url: '/oauth2/introspect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'token=x&client_id=spa' })
  t.equal(spa.statusCode, 401)
  t.equal(spa.json().error, 'invalid_client')
  await form(flow, '/oauth2/revoke', { token: tokens.access_token as string }, 'web-app')
  t.strictSame((await form(flow, '/oauth2/introspect', { token: tokens.access_token as string }, 'resource')).json(), { active: false })
  t.strictSame((await form(flow, '/oauth2/introspect', { token: tokens.refresh_token as string }, 'resource')).json(), { active: false })
})

t.test('CORS for the web_origins of public browser clients on token, userinfo, revoke, introspect', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'spa', { type: 'public', web_origins: ['https://spa.example'] })
  const preflight = await flow.app.inject({ method: 'OPTIONS', url: '/oauth2/token', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST' } })
  t.equal(preflight.statusCode, 204)
  t.match(preflight.headers, { 'access-control-allow-origin': 'https://spa.example', 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'Authorization, Content-Type' })
  t.equal(preflight.headers['access-control-allow-credentials'], undefined)
  const call = await flow.app.inject({ method: 'POST', url: '/oauth2/token', headers: { origin: 'https://spa.example', 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=authorization_code&client_id=spa&code=x' })
  t.equal(call.headers['access-control-allow-origin'], 'https://spa.example')
  t.equal(call.json().error, 'invalid_grant')
  // a browser may read userinfo's refusal too; a call without Origin (a relying party's server) gets no CORS header
  const refused = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { origin: 'https://spa.example' } })
  t.equal(refused.statusCode, 401)
  t.match(refused.headers, { 'access-control-allow-origin': 'https://spa.example', vary: 'Origin' })
  t.strictSame(refused.json(), { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' })
  const server = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo' })
  t.equal(server.headers['access-control-allow-origin'], undefined)
  t.equal(server.headers.vary, undefined)
  // negative control: another origin is not allowed
  const foreign = await flow.app.inject({ method: 'OPTIONS', url: '/oauth2/userinfo', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } })
  t.equal(foreign.statusCode, 204)
  t.equal(foreign.headers['access-control-allow-origin'], undefined)
  t.equal((await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { origin: 'https://evil.example' } })).headers['access-control-allow-origin'], undefined)
})

t.test('userinfo keeps verified access tokens as /api keeps its own, and a revoked signing key ends them at once', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', {})
  const { access_token: access } = await userTokens(flow, 'web-app', 'kim@example.com')
  const ask = async () => await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${access as string}` } })
  t.equal((await ask()).statusCode, 200)
  t.equal((await ask()).statusCode, 200, 'the second answer comes from the verified token')
  // a kept token is taken from the header without the character scan only when presented exactly as issued
  for (const [header, status] of [[`Bearer  ${access as string}`, 200], [`Bearer ${access as string} x`, 401], [`Bearer ${access as string}\u0000`, 401]] as const) {
    const res = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: header } })
    t.equal(res.statusCode, status, JSON.stringify(header.slice(-3)))
  }
  const { kid } = JSON.parse(Buffer.from((access as string).split('.')[0] as string, 'base64url').toString()) as { kid: string }
  const revoked = await flow.app.inject({ method: 'DELETE', url: `/api/keys/${kid}`, headers: flow.admin })
  t.equal(revoked.statusCode, 204, 'the key that signed the token is revoked')
  const after = await ask()
  t.equal(after.statusCode, 401, 'refused at once: the kept token went with the key')
  t.equal(after.json().code, 'token_invalid')
})
