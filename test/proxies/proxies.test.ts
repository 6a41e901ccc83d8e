import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { CSRF_REJECTED, MISSING_ADMIN } from '../patterns.js'
import { build, claimsOf, createUser, login, tempDir } from '../helper.js'
import { caddySites, fencedBlock, freePort, nginxHttp, nginxParts, replaced, send, startCaddy, startNginx, startUpstream, type Answer } from './support.js'

/*
 * Forward authentication through the real Debian nginx and Caddy, each run as a child process of
 * this test on free 127.0.0.1 ports, with the configurations of docs/proxies.md read out of the
 * document: gatehouse listens for real, and a tiny upstream echoes the headers it received. Each
 * protection has its negative control: the same configuration without the line that makes it.
 */

const FOREIGN = 'http://evil.example.net'

interface Setup { app: FastifyInstance, user: Signed, bare: Signed, upstream: number }
interface Signed { id: string, email: string, token: string, sessionId: string }

async function signIn (app: FastifyInstance, roles: string[]): Promise<Signed> {
  const user = await createUser(app, { roles })
  const { access_token: token } = await login(app, user)
  return { id: user.id, email: user.email, token, sessionId: claimsOf(token).session_id }
}

/** gatehouse listening on a free port, trusting the application origins `origins` for the CSRF rule. */
async function startGatehouse (t: Test, origins: string[]): Promise<Setup & { port: number }> {
  const app = await build(t, { CORS_ORIGINS: origins.join(',') })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const upstream = await startUpstream(t)
  return { app, port: (app.server.address() as AddressInfo).port, upstream, user: await signIn(app, ['user']), bare: await signIn(app, []) }
}

const bearer = (user: Signed) => ({ authorization: `Bearer ${user.token}` })
const cookie = (user: Signed) => ({ cookie: `access_token=${user.token}` })

function echoed (answer: Answer): { method: string, headers: Record<string, string | undefined> } {
  if (answer.status !== 200) throw new Error(`the proxy answered ${answer.status}: ${answer.body}`)
  return JSON.parse(answer.body) as { method: string, headers: Record<string, string | undefined> }
}

function identityOf (headers: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('x-auth-')))
}

/**
 * What every proxy must do with the document's configuration; `port` serves it, `adminPort` the
 * roles=admin variant. `stripsAll`: the configuration removes every client-sent X-Auth-* header
 * (Caddy's), not only the five it sets (nginx's).
 */
async function assertForwardAuth (t: Test, s: Setup, port: number, adminPort: number, appOrigin: string, stripsAll: boolean): Promise<void> {
  const none = await send(port, 'GET', '/page')
  t.equal(none.status, 401, 'no token: 401')

  const seen = echoed(await send(port, 'GET', '/page?roles=admin', { ...bearer(s.user), 'x-auth-user-id': s.bare.id, 'x-auth-superuser': 'true', 'x-auth-roles': 'admin' }))
  t.strictSame(identityOf(seen.headers), {
    'x-auth-user-id': s.user.id,
    'x-auth-email': s.user.email,
    'x-auth-roles': 'user',
    'x-auth-session-id': s.user.sessionId,
    'x-auth-superuser': 'false'
  }, 'the upstream sees the identity from gatehouse, never the client-sent values (nor the client\'s ?roles=)')

  // a user without roles: gatehouse's X-Auth-Roles is empty, so the client's must be gone, not passed
  // (nginx removes a header set to an empty value; Caddy 2.6 sets it empty); nor any other X-Auth-*
  const bare = echoed(await send(port, 'GET', '/page', { ...bearer(s.bare), 'x-auth-roles': 'admin', 'x-auth-tenant': 'other' }))
  const { 'x-auth-roles': roles, ...rest } = identityOf(bare.headers)
  t.ok(roles === undefined || roles === '', `no roles: the client's X-Auth-Roles is gone (${String(roles)})`)
  t.strictSame(rest, {
    'x-auth-user-id': s.bare.id,
    'x-auth-email': s.bare.email,
    'x-auth-session-id': s.bare.sessionId,
    'x-auth-superuser': 'false',
    ...(stripsAll ? {} : { 'x-auth-tenant': 'other' })
  }, 'no roles: the identity from gatehouse')
  t.equal((await send(port, 'GET', '/page', { 'x-auth-user-id': s.user.id })).status, 401, 'identity headers alone are not a credential')

  t.equal((await send(adminPort, 'GET', '/page', bearer(s.user))).status, 403, 'roles=admin, a plain user: 403')

  // the CSRF rule on the original method, through the proxy
  t.equal((await send(port, 'POST', '/form', { ...cookie(s.user), origin: FOREIGN, 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')).status, 403, 'cookie POST from a foreign origin: 403')
  t.equal((await send(port, 'POST', '/form', { ...cookie(s.user), 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')).status, 403, 'cookie POST without an Origin: 403')
  const own = echoed(await send(port, 'POST', '/form', { ...cookie(s.user), origin: appOrigin, 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'))
  t.equal(own.method, 'POST', 'cookie POST from the application\'s own origin reaches the upstream')
  t.equal(own.headers['x-auth-user-id'], s.user.id)
  t.equal(echoed(await send(port, 'GET', '/page', { ...cookie(s.user), origin: FOREIGN })).headers['x-auth-user-id'], s.user.id, 'cookie GET from a foreign origin: allowed (not a state change)')
  t.equal(echoed(await send(port, 'POST', '/api', { ...bearer(s.user), origin: FOREIGN })).method, 'POST', 'Bearer POST from a foreign origin: allowed')
}

/** Signs the session out and measures how long the proxy keeps letting its token through. */
async function assertRevokedWithinASecond (t: Test, s: Setup, port: number): Promise<void> {
  const session = await signIn(s.app, ['user'])
  t.equal((await send(port, 'GET', '/page', bearer(session))).status, 200, 'before logout')
  const out = await s.app.inject({ method: 'POST', url: '/auth/logout', headers: bearer(session) })
  t.equal(out.statusCode, 204)
  const start = Date.now()
  let answer = await send(port, 'GET', '/page', bearer(session))
  while (answer.status === 200 && Date.now() - start < 1000) answer = await send(port, 'GET', '/page', bearer(session))
  t.equal(answer.status, 401, `revoked session refused within ${Date.now() - start} ms`)
  t.equal((await send(port, 'GET', '/page', cookie(session))).status, 401, 'by cookie too')
}

t.test('nginx auth_request with the configuration of docs/proxies.md', async (t) => {
  const dir = tempDir(t)
  const [port = 0, adminPort = 0, leakPort = 0, getPort = 0, bodyless = 0] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()])
  const appOrigin = `http://127.0.0.1:${port}`
  // nginx sends gatehouse its own Host: the application's origins are listed in CORS_ORIGINS, as the document says
  const s = await startGatehouse(t, [appOrigin, `http://127.0.0.1:${getPort}`])
  const { upstream, servers: block } = nginxParts()
  const admin = replaced(block, '/auth/verify?mode=auth_request&roles=;', '/auth/verify?mode=auth_request&roles=admin;')
  const servers = [
    { port, block },
    { port: adminPort, block: admin },
    // negative controls: the document's block less the line that overrides X-Auth-User-Id / passes the method
    { port: leakPort, block: replaced(block, 'proxy_set_header X-Auth-User-Id    $auth_user_id;', '') },
    { port: getPort, block: replaced(block, 'proxy_set_header X-Forwarded-Method $request_method;', '') },
    // and the roles=admin block less the line that asks again for the 403's body
    { port: bodyless, block: replaced(admin, 'error_page 403 @gh_refused;', '') }
  ]
  await startNginx(t, dir, nginxHttp({ gatehouse: s.port, upstream: s.upstream }, upstream, servers), servers.map((x) => x.port))

  await assertForwardAuth(t, s, port, adminPort, appOrigin, false)
  await assertRevokedWithinASecond(t, s, port)

  const leaked = echoed(await send(leakPort, 'GET', '/page', { ...bearer(s.user), 'x-auth-user-id': s.bare.id }))
  t.equal(leaked.headers['x-auth-user-id'], s.bare.id, 'negative control: without its proxy_set_header line, the client\'s X-Auth-User-Id reaches the upstream')
  const post = await send(getPort, 'POST', '/form', { ...cookie(s.user), origin: FOREIGN, 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')
  t.equal(post.status, 200, 'negative control: without X-Forwarded-Method, a cross-site cookie POST gets through (the subrequest is a GET)')

  // a 403 carries gatehouse's answer, asked again through error_page (auth_request drops the body)
  const forbidden = await send(adminPort, 'GET', '/page', bearer(s.user))
  t.equal(forbidden.status, 403)
  t.same(JSON.parse(forbidden.body), MISSING_ADMIN, 'gatehouse\'s 403 body')
  const plain = await send(bodyless, 'GET', '/page', bearer(s.user))
  t.equal(plain.status, 403)
  t.match(plain.body, '<title>403 Forbidden</title>', 'negative control: without error_page 403, nginx\'s own page')
  // asked again with the request's own method: a refused cross-site POST is refused again, with its body
  const refused = await send(port, 'POST', '/form', { ...cookie(s.user), origin: FOREIGN, 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')
  t.equal(refused.status, 403)
  t.same(JSON.parse(refused.body), CSRF_REJECTED, 'gatehouse\'s csrf_rejected body')
  t.equal(refused.headers['x-auth-user-id'], undefined, 'no identity in the answer')
})

t.test('Caddy forward_auth with the configuration of docs/proxies.md', async (t) => {
  const dir = tempDir(t)
  const [port = 0, adminPort = 0, leakPort = 0] = await Promise.all([freePort(), freePort(), freePort()])
  const appOrigin = `http://127.0.0.1:${port}`
  // Caddy passes the client's Host, so the application's own origin is gatehouse's "self" here; none listed
  const s = await startGatehouse(t, [])
  const block = fencedBlock('caddyfile')
  const sites = [
    { port, block },
    { port: adminPort, block: replaced(block, 'uri /auth/verify?mode=forward_auth\n', 'uri /auth/verify?mode=forward_auth&roles=admin\n') },
    // negative control: the document's block less the line that strips client-sent X-Auth-* headers
    { port: leakPort, block: replaced(block, 'request_header -X-Auth-*\n', '\n') }
  ]
  await startCaddy(t, dir, caddySites({ gatehouse: s.port, upstream: s.upstream }, sites), sites.map((x) => x.port))

  await assertForwardAuth(t, s, port, adminPort, appOrigin, true)
  await assertRevokedWithinASecond(t, s, port)

  // Caddy passes gatehouse's own answer on: the exact bodies
  const none = await send(port, 'GET', '/page')
  t.equal(none.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.same(JSON.parse(none.body), { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' })
  const csrf = await send(port, 'POST', '/form', { ...cookie(s.user), origin: FOREIGN }, 'a=1')
  t.same(JSON.parse(csrf.body), { error: 'Forbidden', message: 'Cross-origin request rejected', code: 'csrf_rejected', reason: 'csrf_rejected' })
  const forbidden = await send(adminPort, 'GET', '/page', bearer(s.user))
  t.same(JSON.parse(forbidden.body), { error: 'Forbidden', message: 'You are not allowed to perform this action', code: 'forbidden', reason: 'missing_role', required_roles: ['admin'] })

  // negative control: without the stripping line, a client-sent X-Auth-* header gatehouse does not set
  // reaches the application (as, on the Caddy versions that skip an empty value, the client's X-Auth-Roles would)
  const leaked = echoed(await send(leakPort, 'GET', '/page', { ...bearer(s.bare), 'x-auth-tenant': 'other' }))
  t.equal(leaked.headers['x-auth-tenant'], 'other', 'negative control: without request_header -X-Auth-*, a client-sent X-Auth-* header reaches the upstream')
})
