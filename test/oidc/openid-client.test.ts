import { setTimeout as sleep } from 'node:timers/promises'
import * as oidc from 'openid-client'
import t, { type Test } from 'tap'
import { HttpBrowser } from './browser.js'
import { OIDC_ALG, authorizationRequest, authorizeThrough, createClient, jwtPart, listeningProvider, portalUser, rpConfig, type CreatedClient, type Provider } from './support.js'
import { UUID } from '../patterns.js'

/*
 * gatehouse's provider (routes/oauth2/, the discovery documents, the portal's sign-in and consent
 * pages) as a certified relying-party library sees it: openid-client 6 (panva) against the
 * listening server, the browser's part played over HTTP. Every step is the library's own
 * validation (PKCE, state, nonce, RFC 9207 `iss`, the ID token's signature through the JWKS).
 */

const CALLBACK = 'http://127.0.0.1:9/callback'
const AFTER_LOGOUT = 'http://127.0.0.1:9/after-logout'
const SCOPE = 'openid profile email roles offline_access'

async function setup (t: Test): Promise<{ provider: Provider, web: CreatedClient, config: oidc.Configuration }> {
  const provider = await listeningProvider(t, { REFRESH_REUSE_INTERVAL: '1s' })
  const web = await createClient(provider, {
    name: 'Web app',
    redirect_uris: [CALLBACK],
    post_logout_redirect_uris: [AFTER_LOGOUT],
    scopes: ['openid', 'profile', 'email', 'roles', 'offline_access'],
    grant_types: ['authorization_code', 'refresh_token']
  })
  return { provider, web, config: await rpConfig(provider.issuer, web) }
}

/** Signs `email` in at the portal, consents, redeems the code: openid-client's token response. */
async function codeFlow (t: Test, config: oidc.Configuration, browser: HttpBrowser, person: { email: string, password: string }) {
  const request = await authorizationRequest(config, CALLBACK, SCOPE)
  const { callback, visited } = await authorizeThrough(browser, request.url, person, { redirectUri: CALLBACK })
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
  return { request, callback, visited, tokens }
}

/** Asserts `promise` fails with an error matching `wanted` (the fields openid-client's errors carry: code, error, status). */
async function refused (t: Test, promise: Promise<unknown>, wanted: Record<string, unknown>, message = 'refused'): Promise<void> {
  const outcome = await promise.then(() => 'resolved', (err: unknown) => err)
  t.match(outcome, wanted, message)
}

t.test('openid-client 6 against the listening provider', async (t) => {
  const { provider, web, config } = await setup(t)
  const user = await portalUser(provider, { email: 'ada@example.com', name: 'Ada Lovelace', roles: ['editor'] })

  t.test('discovery: the document openid-client reads', async (t) => {
    const meta = config.serverMetadata()
    t.equal(meta.issuer, provider.issuer)
    t.equal(meta.authorization_endpoint, `${provider.issuer}/oauth2/authorize`)
    t.equal(meta.token_endpoint, `${provider.issuer}/oauth2/token`)
    t.equal(meta.userinfo_endpoint, `${provider.issuer}/oauth2/userinfo`)
    t.equal(meta.end_session_endpoint, `${provider.issuer}/oauth2/end-session`)
    t.equal(meta.jwks_uri, `${provider.issuer}/.well-known/jwks.json`)
    t.same(meta.id_token_signing_alg_values_supported, [OIDC_ALG])
    t.same(meta.code_challenge_methods_supported, ['S256'])
    t.equal(meta.authorization_response_iss_parameter_supported, true)
  })

  t.test('the code flow with PKCE through the sign-in and consent pages, the ID token, userinfo', async (t) => {
    const browser = new HttpBrowser()
    const { callback, visited, tokens } = await codeFlow(t, config, browser, user)
    t.same(visited, ['/oauth2/authorize', '/portal/login', '/oauth2/authorize', '/portal/consent', '/callback'])
    t.equal(callback.searchParams.get('iss'), provider.issuer, 'RFC 9207')
    t.equal(tokens.token_type, 'bearer', 'openid-client lower-cases "Bearer"')
    t.equal(tokens.scope, SCOPE)
    t.type(tokens.refresh_token, 'string')
    const claims = tokens.claims()
    t.match(claims, { iss: provider.issuer, sub: user.id, aud: web.client_id, azp: web.client_id, acr: 'aal1', amr: ['pwd'], sid: UUID, email: user.email, email_verified: false, name: 'Ada Lovelace', roles: ['editor'] })
    t.equal(jwtPart(tokens.access_token, 0).typ, 'at+jwt', 'RFC 9068')
    t.match(jwtPart(tokens.access_token, 1), { iss: provider.issuer, sub: user.id, aud: web.client_id, client_id: web.client_id, scope: SCOPE, session_id: UUID, roles: ['editor'] })
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id)
    t.strictSame({ ...info }, { sub: user.id, email: user.email, email_verified: false, name: 'Ada Lovelace', roles: ['editor'] })
    await refused(t, oidc.fetchUserInfo(config, tokens.access_token, 'someone-else'), { code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' }, 'the negative control: another subject fails')

    // a second authorization finds the portal session and the stored consent: straight back
    const again = await codeFlow(t, config, browser, user)
    t.same(again.visited, ['/oauth2/authorize', '/callback'])
    t.equal(again.tokens.claims()?.sid, claims?.sid, 'the same portal session')
  })

  t.test('a nonce or a state the RP did not send is refused by the library (the negative control)', async (t) => {
    const browser = new HttpBrowser()
    const request = await authorizationRequest(config, CALLBACK, SCOPE)
    const { callback } = await authorizeThrough(browser, request.url, user, { redirectUri: CALLBACK })
    await refused(t, oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: 'another-state', expectedNonce: request.nonce }),
      { code: 'OAUTH_INVALID_RESPONSE' })
    await refused(t, oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: 'another-nonce' }),
      { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })
  })

  t.test('a spent code presented again is refused and ends what its first use created', async (t) => {
    const { callback, request, tokens } = await codeFlow(t, config, new HttpBrowser(), user)
    await refused(t, oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce }),
      { code: 'OAUTH_RESPONSE_BODY_ERROR', error: 'invalid_grant' })
    await refused(t, oidc.fetchUserInfo(config, tokens.access_token, user.id), { status: 401 }, 'the access token of the first use')
    await refused(t, oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''), { error: 'invalid_grant' }, 'its refresh token')
  })

  t.test('refresh: rotation, a new ID token without nonce, reuse after the grace interval ends the child session', async (t) => {
    const { tokens } = await codeFlow(t, config, new HttpBrowser(), user)
    const first = tokens.refresh_token ?? ''
    const rotated = await oidc.refreshTokenGrant(config, first)
    t.not(rotated.refresh_token, first, 'rotated')
    t.match(rotated.claims(), { sub: user.id, aud: web.client_id, acr: 'aal1' })
    t.equal(rotated.claims()?.nonce, undefined)
    await sleep(1100)
    await refused(t, oidc.refreshTokenGrant(config, first), { error: 'invalid_grant' }, 'the spent token, past the grace interval')
    await refused(t, oidc.refreshTokenGrant(config, rotated.refresh_token ?? ''), { error: 'invalid_grant' }, 'the whole child session ended')
    await refused(t, oidc.fetchUserInfo(config, rotated.access_token, user.id), { status: 401 })
  })

  t.test('introspection and revocation (RFC 7662, RFC 7009)', async (t) => {
    const { tokens } = await codeFlow(t, config, new HttpBrowser(), user)
    const active = await oidc.tokenIntrospection(config, tokens.access_token)
    t.match(active, { active: true, scope: SCOPE, client_id: web.client_id, sub: user.id, iss: provider.issuer, aud: web.client_id })
    await oidc.tokenRevocation(config, tokens.access_token)
    t.strictSame({ ...await oidc.tokenIntrospection(config, tokens.access_token) }, { active: false })
    t.strictSame({ ...await oidc.tokenIntrospection(config, tokens.refresh_token ?? '') }, { active: false }, 'the session it belongs to ended')
    await refused(t, oidc.fetchUserInfo(config, tokens.access_token, user.id), { status: 401 })
    await oidc.tokenRevocation(config, 'not-a-token-gatehouse-issued')
    t.pass('an unknown token revokes with 200')
  })

  t.test('client_credentials (§17): an RFC 9068 token for the client itself, refused by /api/*', async (t) => {
    const service = await createClient(provider, { name: 'Reporting', redirect_uris: [CALLBACK], grant_types: ['client_credentials'], roles: ['reports'] })
    const machine = await rpConfig(provider.issuer, service)
    const tokens = await oidc.clientCredentialsGrant(machine)
    t.equal(tokens.refresh_token, undefined)
    t.equal(tokens.id_token, undefined)
    t.match(jwtPart(tokens.access_token, 1), { sub: service.client_id, client_id: service.client_id, kind: 'client', roles: ['reports'], aud: service.client_id })
    t.match(await oidc.tokenIntrospection(machine, tokens.access_token), { active: true, client_id: service.client_id, sub: service.client_id })
    const me = await provider.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.equal(me.statusCode, 401)
    t.equal(me.json().code, 'token_invalid')
    await refused(t, oidc.clientCredentialsGrant(config), { error: 'unauthorized_client' }, 'a client without the grant type (the negative control)')
  })

  t.test('end-session: the ID token hint ends the portal session, back to the registered URI with the state', async (t) => {
    const browser = new HttpBrowser()
    const { tokens } = await codeFlow(t, config, browser, user)
    const logout = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token ?? '', post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye' })
    const answer = await browser.get(logout.href)
    t.equal(answer.status, 303)
    t.equal(answer.location, `${AFTER_LOGOUT}?state=bye`)
    const next = await authorizationRequest(config, CALLBACK, SCOPE)
    const after = await browser.get(next.url)
    t.equal(after.status, 303)
    t.match(after.location, `${provider.issuer}/portal/login?`, 'signed out: the next authorization asks for the sign-in')
    t.match(await oidc.fetchUserInfo(config, tokens.access_token, user.id), { sub: user.id }, 'a local logout of its parent leaves the child session (§15.1)')

    // the negative control: an unregistered URI is never a target, the hint still ends the session
    const other = new HttpBrowser()
    const second = await codeFlow(t, config, other, user)
    const unregistered = oidc.buildEndSessionUrl(config, { id_token_hint: second.tokens.id_token ?? '', post_logout_redirect_uri: 'http://127.0.0.1:9/elsewhere', state: 'bye' })
    const elsewhere = await other.get(unregistered.href)
    t.equal(elsewhere.status, 303)
    t.equal(elsewhere.location, `${provider.issuer}/portal/login?done=logout`, 'the signed-out page')
  })

  t.test('a public client: PKCE without a secret', async (t) => {
    const spa = await createClient(provider, { name: 'Single page', type: 'public', token_endpoint_auth_method: 'none', redirect_uris: [CALLBACK] })
    t.equal(spa.client_secret, undefined)
    const pub = await rpConfig(provider.issuer, spa)
    const request = await authorizationRequest(pub, CALLBACK, 'openid email')
    const { callback } = await authorizeThrough(new HttpBrowser(), request.url, user, { redirectUri: CALLBACK })
    const tokens = await oidc.authorizationCodeGrant(pub, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
    t.match(tokens.claims(), { sub: user.id, aud: spa.client_id, email: user.email })
    t.equal(tokens.claims()?.name, undefined, 'no profile scope, no name')
    const wrong = await authorizationRequest(pub, CALLBACK, 'openid email')
    const second = await authorizeThrough(new HttpBrowser(), wrong.url, user, { redirectUri: CALLBACK })
    await refused(t, oidc.authorizationCodeGrant(pub, second.callback, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: wrong.state, expectedNonce: wrong.nonce }),
      { error: 'invalid_grant' }, 'another verifier (the negative control)')
  })
})
