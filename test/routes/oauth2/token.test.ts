import { createLocalJWKSet, jwtVerify } from 'jose'
import { sql } from 'kysely'
import t from 'tap'
import { login, rawSql } from '../../helper.js'
import { addClient, codeFor, exchange, flowApp, headerOf, ISSUER, payloadOf, person, pkce, REDIRECT, signedIn, token, type Flow } from './flow-support.js'

/* POST /oauth2/token, authorization_code (routes/oauth2/token.ts, src/oidc/codes.ts, src/oidc/child-sessions.ts): the code's rules, the tokens and their claims. */

const INVALID_GRANT = { error: 'invalid_grant', error_description: 'The code is invalid, expired or already used.' }

async function keySet (flow: Flow): Promise<ReturnType<typeof createLocalJWKSet>> {
  return createLocalJWKSet((await flow.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json())
}

t.test('a code for tokens: the body, no-store, and every claim of the ID and access tokens, verified with the JWKS', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { access_token_ttl: 600, scopes: ['openid', 'profile', 'email', 'roles'] })
  const user = await person(flow, 'ann@example.com', ['user', 'staff'])
  const browser = await signedIn(flow, user)
  const portal = payloadOf(browser.jar.get('access_token') as string)
  const p = pkce()
  const code = await codeFor(flow, browser, 'web-app', p, { scope: 'openid email profile', nonce: 'n-0S6' })
  const res = await exchange(flow, 'web-app', code, p)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as Record<string, string>
  t.strictSame(Object.keys(body).sort(), ['access_token', 'expires_in', 'id_token', 'scope', 'token_type'])
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 600)
  t.equal(body.scope, 'openid email profile')
  const jwks = await keySet(flow)
  const id = await jwtVerify(body.id_token as string, jwks, { issuer: ISSUER, audience: 'web-app', typ: 'JWT' })
  const idClaims = id.payload as Record<string, unknown>
  t.strictSame(Object.keys(idClaims).sort(), ['acr', 'amr', 'aud', 'auth_time', 'azp', 'email', 'email_verified', 'exp', 'iat', 'iss', 'name', 'nonce', 'sid', 'sub'])
  t.match(idClaims, { iss: ISSUER, sub: user.id, aud: 'web-app', azp: 'web-app', nonce: 'n-0S6', acr: 'aal1', amr: ['pwd'], sid: portal.session_id, email: 'ann@example.com', email_verified: false, name: 'Test User', auth_time: portal.auth_time })
  t.equal((idClaims.exp as number) - (idClaims.iat as number), 300, 'ID tokens live 5 minutes')
  t.equal(headerOf(body.id_token as string).kid, JSON.parse(Buffer.from((await flow.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).body).toString()).keys[0].kid)
  const access = await jwtVerify(body.access_token as string, jwks, { issuer: ISSUER, audience: 'web-app', typ: 'at+jwt' })
  const claims = access.payload as Record<string, unknown>
  t.strictSame(Object.keys(claims).sort(), ['acr', 'amr', 'aud', 'auth_time', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'session_id', 'sub'])
  t.match(claims, { iss: ISSUER, sub: user.id, aud: 'web-app', client_id: 'web-app', scope: 'openid email profile', acr: 'aal1', amr: ['pwd'], auth_time: portal.auth_time })
  t.equal((claims.exp as number) - (claims.iat as number), 600, "the client's access_token_ttl")
  t.not(claims.session_id, portal.session_id, 'a child session of its own')
  // the child session: client_id and its parent, stored
  const [row] = await rawSql<{ client_id: string, parent_session_id: string }>(flow.app.config, sql`select client_id, parent_session_id from sessions where id = ${claims.session_id as string}`)
  t.strictSame({ ...row }, { client_id: 'web-app', parent_session_id: portal.session_id })
  // the code is stored only as a keyed hash
  const codes = await rawSql<{ code_hash: string, key_id: string }>(flow.app.config, sql`select code_hash, key_id from oauth_codes`)
  t.equal(codes.length, 1)
  t.not(codes[0]?.code_hash, code)
  t.equal(codes[0]?.key_id, 'k1')
  // with scope roles: the roles in both tokens; no nonce sent, none in the ID token
  const q = pkce()
  const withRoles = (await exchange(flow, 'web-app', await codeFor(flow, browser, 'web-app', q, { scope: 'openid roles' }), q)).json() as Record<string, string>
  t.strictSame(payloadOf(withRoles.access_token as string).roles, ['user', 'staff'])
  t.match(payloadOf(withRoles.id_token as string), { roles: ['user', 'staff'] })
  t.equal(payloadOf(withRoles.id_token as string).nonce, undefined)
  t.equal(payloadOf(withRoles.id_token as string).email, undefined, 'no email scope, no email claim')
})

t.test('a replayed code is invalid_grant and ends the child session its first use created (oidc_code_replayed)', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'] })
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const p = pkce()
  const code = await codeFor(flow, browser, 'web-app', p, { scope: 'openid offline_access' })
  const first = (await exchange(flow, 'web-app', code, p)).json() as Record<string, string>
  const bearer = { authorization: `Bearer ${first.access_token as string}` }
  t.equal((await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: bearer })).statusCode, 200, 'negative control: the first tokens work')
  const replay = await exchange(flow, 'web-app', code, p)
  t.equal(replay.statusCode, 400)
  t.strictSame(replay.json(), INVALID_GRANT)
  t.equal(replay.headers['cache-control'], 'no-store')
  const after = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: bearer })
  t.equal(after.statusCode, 401)
  t.equal(after.json().code, 'token_revoked')
  const refresh = await token(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, 'web-app')
  t.strictSame(refresh.json(), { error: 'invalid_grant', error_description: 'The session has ended.' })
  await flow.app.auditTrail.flush()
  const audit = (await flow.app.inject({ method: 'GET', url: '/api/audit?event=oidc_code_replayed', headers: flow.admin })).json() as { data: Array<Record<string, unknown>> }
  t.equal(audit.data.length, 1)
  t.match(audit.data[0], { event: 'oidc_code_replayed', outcome: 'failure', session_id: payloadOf(first.access_token as string).session_id })
})

t.test('the code is bound: client, redirect_uri, code_verifier, 60 s; each failure is invalid_grant', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'app-a')
  await addClient(flow, 'app-b')
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const cases: Array<[string, (code: string, p: ReturnType<typeof pkce>) => Promise<import('fastify').LightMyRequestResponse>, string]> = [
    ["client A's code at client B", async (code, p) => await exchange(flow, 'app-b', code, p), 'The code was issued to another client.'],
    ['redirect_uri with a trailing slash', async (code, p) => await exchange(flow, 'app-a', code, p, `${REDIRECT}/`), 'The redirect_uri differs from the authorization request\'s.'],
    ['no redirect_uri', async (code, p) => await token(flow, { grant_type: 'authorization_code', code, code_verifier: p.verifier }, 'app-a'), 'The redirect_uri differs from the authorization request\'s.'],
    ['a wrong code_verifier', async (code) => await exchange(flow, 'app-a', code, pkce()), 'The code_verifier does not match the code_challenge.'],
    ['no code_verifier', async (code) => await token(flow, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, 'app-a'), 'The code_verifier does not match the code_challenge.'],
    ['the challenge as verifier (plain)', async (code, p) => await token(flow, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.challenge }, 'app-a'), 'The code_verifier does not match the code_challenge.']
  ]
  for (const [name, redeem, description] of cases) {
    const p = pkce()
    const code = await codeFor(flow, browser, 'app-a', p)
    const res = await redeem(code, p)
    t.equal(res.statusCode, 400, name)
    t.strictSame(res.json(), { error: 'invalid_grant', error_description: description }, name)
    // the code is spent all the same: the right request after it fails
    t.strictSame((await exchange(flow, 'app-a', code, p)).json(), INVALID_GRANT, `${name}: spent`)
  }
  // expired: 60 s
  const p = pkce()
  const code = await codeFor(flow, browser, 'app-a', p)
  const [stored] = await rawSql<{ created_at: string, expires_at: string }>(flow.app.config, sql`select created_at, expires_at from oauth_codes where spent_at is null`)
  t.equal(Date.parse(stored?.expires_at ?? '') - Date.parse(stored?.created_at ?? ''), 60_000)
  await rawSql(flow.app.config, sql`update oauth_codes set expires_at = ${new Date(Date.now() - 1).toISOString()} where spent_at is null`)
  t.strictSame((await exchange(flow, 'app-a', code, p)).json(), INVALID_GRANT, 'expired')
  t.strictSame((await exchange(flow, 'app-a', 'x'.repeat(43), p)).json(), INVALID_GRANT, 'unknown')
  // negative control: a fresh code with everything right works
  const q = pkce()
  t.equal((await exchange(flow, 'app-a', await codeFor(flow, browser, 'app-a', q), q)).statusCode, 200)
})

t.test('RFC 6749 §5.2 errors: unsupported_grant_type, unauthorized_client, invalid_client (+ Basic), invalid_request; form bodies only', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app')
  await addClient(flow, 'post-app', { token_endpoint_auth_method: 'client_secret_post' })
  t.strictSame((await token(flow, { grant_type: 'password', username: 'a', password: 'b' }, 'web-app')).json(), { error: 'unsupported_grant_type', error_description: 'The grant types supported are authorization_code, refresh_token and client_credentials.' })
  const refresh = await token(flow, { grant_type: 'refresh_token', refresh_token: 'x' }, 'web-app')
  t.equal(refresh.statusCode, 400)
  t.strictSame(refresh.json(), { error: 'unauthorized_client', error_description: 'The client may not use the grant refresh_token.' })
  t.equal((await token(flow, { grant_type: 'client_credentials' }, 'web-app')).json().error, 'unauthorized_client')
  t.strictSame((await token(flow, {}, 'web-app')).json(), { error: 'invalid_request', error_description: 'The grant_type parameter is required.' })
  // a wrong secret with Basic: 401 and the Basic challenge
  flow.secrets.set('web-app', 'wrong')
  const basic = await token(flow, { grant_type: 'authorization_code', code: 'x' }, 'web-app')
  t.equal(basic.statusCode, 401)
  t.equal(basic.headers['www-authenticate'], 'Basic realm="gatehouse"')
  t.strictSame(basic.json(), { error: 'invalid_client', error_description: 'Client authentication failed' })
  // with client_secret_post: 401 without the challenge
  const post = await token(flow, { grant_type: 'authorization_code', code: 'x', client_id: 'post-app', client_secret: 'wrong' })
  t.equal(post.statusCode, 401)
  t.equal(post.headers['www-authenticate'], undefined)
  // JSON is not a form: invalid_request in the same body, never §5's shape
  const json = await flow.app.inject({ method: 'POST', url: '/oauth2/token', payload: { grant_type: 'client_credentials' } })
  t.equal(json.statusCode, 400)
  t.strictSame(json.json(), { error: 'invalid_request', error_description: 'The body must be application/x-www-form-urlencoded.' })
  t.equal(json.headers['cache-control'], 'no-store')
  // a parameter sent twice
  const twice = await flow.app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=a&grant_type=b' })
  t.equal(twice.json().error, 'invalid_request')
})

t.test("gatehouse's own routes refuse OIDC tokens (401 token_invalid); /auth/refresh refuses OIDC refresh tokens and /oauth2/token §3's", async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'] })
  const user = await person(flow, 'ann@example.com')
  const browser = await signedIn(flow, user)
  const p = pkce()
  const tokens = (await exchange(flow, 'web-app', await codeFor(flow, browser, 'web-app', p, { scope: 'openid offline_access' }), p)).json() as Record<string, string>
  for (const [method, url] of [['GET', '/auth/me'], ['GET', '/api/auth/sessions'], ['GET', '/auth/verify']] as const) {
    for (const bearer of [tokens.access_token, tokens.id_token]) {
      const res = await flow.app.inject({ method, url, headers: { authorization: `Bearer ${bearer as string}` } })
      t.equal(res.statusCode, 401, url)
      t.equal(res.json().code, 'token_invalid', url)
    }
    const cookie = await flow.app.inject({ method, url, headers: { cookie: `access_token=${tokens.access_token as string}` } })
    t.equal(cookie.json().code, 'token_invalid', `${url} (cookie)`)
  }
  const refreshed = await flow.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: tokens.refresh_token } })
  t.equal(refreshed.statusCode, 401)
  t.equal(refreshed.json().code, 'token_invalid')
  const own = await login(flow.app, user)
  t.equal((await flow.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${own.access_token}` } })).statusCode, 200, 'negative control: §3 tokens pass')
  t.strictSame((await token(flow, { grant_type: 'refresh_token', refresh_token: own.refresh_token }, 'web-app')).json(), { error: 'invalid_grant', error_description: 'The refresh token is invalid or expired.' })
})
