import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, rawSql } from '../../helper.js'
import { sql } from 'kysely'
import { auditRows, createClient, OIDC, oidcApp } from './oidc-support.js'

/* /api/oauth2/clients (routes/api/oauth2-clients.ts): the provider's clients, managed by a superuser (SPEC §15). */

const WEB = { name: 'Web app', type: 'confidential', redirect_uris: ['https://app.example.com/callback'] }
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const SECRET = /^[A-Za-z0-9_-]{43}$/

function expectedClient (overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: 'web-app',
    name: 'Web app',
    type: 'confidential',
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: ['https://app.example.com/callback'],
    post_logout_redirect_uris: [],
    web_origins: [],
    scopes: ['openid', 'profile', 'email'],
    allowed_roles: [],
    require_aal2: false,
    skip_consent: false,
    grant_types: ['authorization_code'],
    roles: [],
    access_token_ttl: 900,
    disabled: false,
    read_only: false,
    ...overrides
  }
}

/** The body without its times, which are checked for their form. */
function timeless (t: Test, body: Record<string, unknown>): Record<string, unknown> {
  const { created_at: created, updated_at: updated, ...rest } = body
  t.match(created, TIME)
  t.match(updated, TIME)
  return rest
}

t.test('a superuser creates a confidential client: 201, Location, the defaults, the secret once and only its keyed hash stored', async (t) => {
  const env = await oidcApp(t)
  const res = await createClient(env, { ...WEB, client_id: 'web-app' })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, '/api/oauth2/clients/web-app')
  t.equal(res.headers['cache-control'], 'no-store')
  const { client_secret: secret, ...body } = res.json() as Record<string, unknown>
  t.match(secret, SECRET, '256 random bits in base64url')
  t.strictSame(timeless(t, body), expectedClient())

  const [row] = await rawSql<{ secret_hash: string, secret_key_id: string }>(env.app.config, sql`select secret_hash, secret_key_id from oauth_clients`)
  t.equal(row?.secret_key_id, 'k1', 'the data key id beside the hash')
  t.match(row?.secret_hash, /^[A-Za-z0-9_-]{43}$/)
  t.not(row?.secret_hash, secret, 'never the secret itself')

  const got = await env.app.inject({ method: 'GET', url: '/api/oauth2/clients/web-app', headers: env.admin })
  t.equal(got.statusCode, 200)
  t.strictSame(timeless(t, got.json()), expectedClient(), 'read back without the secret')
  t.notOk(got.body.includes(secret as string))
  const [created] = await auditRows(env, 'oidc_client_created')
  t.match(created, { event: 'oidc_client_created', outcome: 'success', actor_id: env.adminId, detail: 'web-app' })
})

t.test('a public client gets method none and no secret; a client_id is generated when absent', async (t) => {
  const env = await oidcApp(t)
  const res = await createClient(env, { name: 'SPA', type: 'public', redirect_uris: ['http://127.0.0.1:8080/cb'], web_origins: ['http://127.0.0.1:8080'] })
  t.equal(res.statusCode, 201)
  const body = res.json() as Record<string, unknown>
  t.match(body.client_id, /^[0-9a-f]{24}$/)
  t.equal(body.token_endpoint_auth_method, 'none')
  t.notOk('client_secret' in body)
  t.equal(res.headers.location, `/api/oauth2/clients/${body.client_id as string}`)
})

t.test('every field is kept as given', async (t) => {
  const env = await oidcApp(t)
  const full = {
    ...WEB,
    client_id: 'web-app',
    token_endpoint_auth_method: 'client_secret_post',
    redirect_uris: ['https://app.example.com/callback', 'http://localhost:8080/cb', 'http://[::1]:9000/cb'],
    post_logout_redirect_uris: ['https://app.example.com/bye'],
    web_origins: ['https://app.example.com'],
    scopes: ['openid', 'roles', 'offline_access'],
    allowed_roles: ['staff'],
    require_aal2: true,
    skip_consent: true,
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
    roles: ['reporter'],
    access_token_ttl: 300,
    disabled: false
  }
  const res = await createClient(env, full)
  t.equal(res.statusCode, 201)
  const { client_secret: _secret, ...body } = res.json() as Record<string, unknown>
  const { name: _name, type: _type, ...rest } = full
  t.strictSame(timeless(t, body), expectedClient(rest))
})

t.test('the rules of §15 are 422 validation_failed with the usual body, and nothing is stored', async (t) => {
  const env = await oidcApp(t)
  const cases: Array<[string, Record<string, unknown>, Record<string, string[]>]> = [
    ['a relative redirect URI', { redirect_uris: ['/callback'] }, { redirect_uris: ['The redirect_uris field must be an absolute URL: /callback'] }],
    ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, { redirect_uris: ['The redirect_uris field must not have a fragment: https://app.example.com/cb#x'] }],
    ['an empty fragment', { redirect_uris: ['https://app.example.com/cb#'] }, { redirect_uris: ['The redirect_uris field must not have a fragment: https://app.example.com/cb#'] }],
    ['http on a public host', { redirect_uris: ['http://app.example.com/cb'] }, { redirect_uris: ['The redirect_uris field must be https (http only on a loopback address or localhost): http://app.example.com/cb'] }],
    ['http on a localhost subdomain', { redirect_uris: ['http://app.localhost/cb'] }, { redirect_uris: ['The redirect_uris field must be https (http only on a loopback address or localhost): http://app.localhost/cb'] }],
    ['another scheme', { redirect_uris: ['javascript:alert(1)'] }, { redirect_uris: ['The redirect_uris field must be https (http only on a loopback address or localhost): javascript:alert(1)'] }],
    ['credentials in the URI', { redirect_uris: ['https://u:p@app.example.com/cb'] }, { redirect_uris: ['The redirect_uris field must not carry a user name or password: https://u:p@app.example.com/cb'] }],
    ['a bad post-logout URI', { post_logout_redirect_uris: ['http://evil.example/'] }, { post_logout_redirect_uris: ['The post_logout_redirect_uris field must be https (http only on a loopback address or localhost): http://evil.example/'] }],
    ['a web origin with a path', { web_origins: ['https://app.example.com/x'] }, { web_origins: ['The web_origins field must be an origin (scheme, host and port, no path): https://app.example.com/x'] }],
    ['none for a confidential client', { token_endpoint_auth_method: 'none' }, { token_endpoint_auth_method: ['The token_endpoint_auth_method field must be client_secret_basic or client_secret_post for a confidential client'] }],
    ['basic for a public client', { type: 'public', token_endpoint_auth_method: 'client_secret_basic' }, { token_endpoint_auth_method: ['The token_endpoint_auth_method field must be none for a public client'] }],
    ['client_credentials for a public client', { type: 'public', grant_types: ['client_credentials'] }, { grant_types: ['The grant_types field may include client_credentials only for a confidential client'] }]
  ]
  for (const [what, change, errors] of cases) {
    const res = await createClient(env, { ...WEB, ...change })
    t.equal(res.statusCode, 422, what)
    t.strictSame(res.json(), { error: 'Validation failed', code: 'validation_failed', message: 'The given data was invalid', errors }, what)
  }
  const list = await env.app.inject({ method: 'GET', url: '/api/oauth2/clients', headers: env.admin })
  t.strictSame(list.json(), { data: [] }, 'no partial writes')
  t.equal((await createClient(env, WEB)).statusCode, 201, 'control: the same client with valid fields is created')
})

t.test('the schema bounds every string and array: 422 naming the field', async (t) => {
  const env = await oidcApp(t)
  const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example.com/cb${i}`)
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['client_id too short', { client_id: 'ab' }, 'client_id'],
    ['client_id with capitals', { client_id: 'Web-App' }, 'client_id'],
    ['client_id starting with -', { client_id: '-web' }, 'client_id'],
    ['client_id of 65', { client_id: 'a'.repeat(65) }, 'client_id'],
    ['no name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a name of 101', { name: 'n'.repeat(101) }, 'name'],
    ['no redirect URI', { redirect_uris: [] }, 'redirect_uris'],
    ['eleven redirect URIs', { redirect_uris: uris(11) }, 'redirect_uris'],
    ['a redirect URI of 2049', { redirect_uris: [`https://a.example/${'x'.repeat(2031)}`] }, 'redirect_uris.0'],
    ['eleven post-logout URIs', { post_logout_redirect_uris: uris(11) }, 'post_logout_redirect_uris'],
    ['an unknown scope', { scopes: ['openid', 'admin'] }, 'scopes.1'],
    ['an unknown grant', { grant_types: ['password'] }, 'grant_types.0'],
    ['no grant', { grant_types: [] }, 'grant_types'],
    ['an unknown type', { type: 'native' }, 'type'],
    ['an unknown method', { token_endpoint_auth_method: 'private_key_jwt' }, 'token_endpoint_auth_method'],
    ['a bad role', { allowed_roles: ['Admin!'] }, 'allowed_roles.0'],
    ['33 roles', { roles: Array.from({ length: 33 }, (_, i) => `r${i}`) }, 'roles'],
    ['a ttl under a minute', { access_token_ttl: 59 }, 'access_token_ttl'],
    ['a ttl over a day', { access_token_ttl: 86401 }, 'access_token_ttl'],
    ['an unknown field', { client_secret: 'mine' }, 'client_secret'],
    ['a string boolean', { skip_consent: 'true' }, 'skip_consent']
  ]
  for (const [what, change, field] of cases) {
    const res = await createClient(env, { ...WEB, ...change })
    t.equal(res.statusCode, 422, what)
    const body = res.json() as { code: string, errors: Record<string, string[]> }
    t.equal(body.code, 'validation_failed', what)
    t.ok(Object.keys(body.errors).includes(field), `${what}: ${JSON.stringify(body.errors)}`)
  }
  const missing = await createClient(env, {})
  t.strictSame(Object.keys((missing.json() as { errors: object }).errors).sort(), ['name', 'redirect_uris', 'type'])
})

t.test('a taken client_id is 422 on client_id; PATCH changes fields and holds the whole client to the rules', async (t) => {
  const env = await oidcApp(t)
  t.equal((await createClient(env, { ...WEB, client_id: 'web-app' })).statusCode, 201)
  const taken = await createClient(env, { ...WEB, client_id: 'web-app' })
  t.equal(taken.statusCode, 422)
  t.strictSame(taken.json(), { error: 'Validation failed', code: 'validation_failed', message: 'The given data was invalid', errors: { client_id: ['The client_id has already been taken'] } })

  const patch = (payload: unknown) => env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: payload as object })
  const changed = await patch({ name: 'Renamed', scopes: ['openid'], access_token_ttl: 120 })
  t.equal(changed.statusCode, 200)
  t.strictSame(timeless(t, changed.json()), expectedClient({ name: 'Renamed', scopes: ['openid'], access_token_ttl: 120 }))
  const bad = await patch({ token_endpoint_auth_method: 'none' })
  t.equal(bad.statusCode, 422)
  t.strictSame((bad.json() as { errors: unknown }).errors, { token_endpoint_auth_method: ['The token_endpoint_auth_method field must be client_secret_basic or client_secret_post for a confidential client'] })
  t.equal((await patch({ type: 'public' })).statusCode, 422, 'the type is fixed')
  t.equal((await patch({ client_id: 'other' })).statusCode, 422, 'the id is fixed')
  t.equal((await patch({})).statusCode, 422, 'an empty change')
  const after = await env.app.inject({ method: 'GET', url: '/api/oauth2/clients/web-app', headers: env.admin })
  t.equal((after.json() as { name: string }).name, 'Renamed', 'a refused change wrote nothing')
  const [updated] = await auditRows(env, 'oidc_client_updated')
  t.match(updated, { actor_id: env.adminId, detail: 'web-app' })
  const missing = await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/nope', headers: env.admin, payload: { name: 'x' } })
  t.equal(missing.statusCode, 404)
  t.strictSame(missing.json(), { error: 'Not Found', code: 'not_found', message: 'Client not found' })
})

t.test('rotate-secret answers a new secret once; DELETE answers 204, then 404; both audited', async (t) => {
  const env = await oidcApp(t)
  const { client_secret: first } = (await createClient(env, { ...WEB, client_id: 'web-app' })).json() as { client_secret: string }
  const rotated = await env.app.inject({ method: 'POST', url: '/api/oauth2/clients/web-app/rotate-secret', headers: env.admin })
  t.equal(rotated.statusCode, 200)
  t.equal(rotated.headers['cache-control'], 'no-store')
  const { client_secret: second } = rotated.json() as { client_secret: string }
  t.match(second, SECRET)
  t.not(second, first)
  t.strictSame(Object.keys(rotated.json()), ['client_secret'])
  t.match((await auditRows(env, 'oidc_client_secret_rotated'))[0], { actor_id: env.adminId, detail: 'web-app' })

  const spa = (await createClient(env, { name: 'SPA', type: 'public', redirect_uris: ['https://spa.example.com/cb'] })).json() as { client_id: string }
  const noSecret = await env.app.inject({ method: 'POST', url: `/api/oauth2/clients/${spa.client_id}/rotate-secret`, headers: env.admin })
  t.equal(noSecret.statusCode, 422)
  t.strictSame((noSecret.json() as { errors: unknown }).errors, { client_id: ['A public client has no secret'] })

  const deleted = await env.app.inject({ method: 'DELETE', url: '/api/oauth2/clients/web-app', headers: env.admin })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.match((await auditRows(env, 'oidc_client_deleted'))[0], { actor_id: env.adminId, detail: 'web-app' })
  for (const [method, url] of [['GET', '/api/oauth2/clients/web-app'], ['DELETE', '/api/oauth2/clients/web-app'], ['POST', '/api/oauth2/clients/web-app/rotate-secret']] as const) {
    const res = await env.app.inject({ method, url, headers: env.admin })
    t.equal(res.statusCode, 404, `${method} ${url}`)
  }
  const list = (await env.app.inject({ method: 'GET', url: '/api/oauth2/clients', headers: env.admin })).json() as { data: Array<{ client_id: string }> }
  t.strictSame(list.data.map((c) => c.client_id), [spa.client_id])
})

t.test('superusers only: 401 without a token, 403 superuser_required for an admin', async (t) => {
  const env = await oidcApp(t)
  const admin = await createUser(env.app, { roles: ['admin'] })
  const adminHeader = authHeader((await login(env.app, admin)).access_token)
  const routes = [['GET', '/api/oauth2/clients'], ['POST', '/api/oauth2/clients'], ['GET', '/api/oauth2/clients/web-app'], ['PATCH', '/api/oauth2/clients/web-app'], ['DELETE', '/api/oauth2/clients/web-app'], ['POST', '/api/oauth2/clients/web-app/rotate-secret']] as const
  for (const [method, url] of routes) {
    const anonymous = await env.app.inject({ method, url, payload: method === 'POST' || method === 'PATCH' ? WEB : undefined })
    t.equal(anonymous.statusCode, 401, `${method} ${url}`)
    const denied = await env.app.inject({ method, url, headers: adminHeader, payload: method === 'POST' || method === 'PATCH' ? WEB : undefined })
    t.equal(denied.statusCode, 403, `${method} ${url}`)
    t.match(denied.json(), { code: 'forbidden', reason: 'superuser_required' })
  }
})

t.test('off by default: every route of the provider is 404, the rest unchanged', async (t) => {
  const app = await build(t)
  const user = await createUser(app, { isSuperuser: true })
  const headers = authHeader((await login(app, user)).access_token)
  for (const url of ['/api/oauth2/clients', '/api/oauth2/clients/web-app', '/api/auth/grants', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const res = await app.inject({ method: 'GET', url, headers })
    t.equal(res.statusCode, 404, url)
    t.equal((res.json() as { code: string }).code, 'not_found', url)
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/api/auth/grants/web-app', headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/api/users', headers })).statusCode, 200, 'control: the rest answers')
  const on = await build(t, OIDC)
  t.equal((await on.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).statusCode, 200, 'control: on, the document exists')
})
