import { execFile } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, tempDir } from '../helper.js'
import { caddySites, fencedBlock, freePort, nginxHttp, nginxParts, startCaddy, startNginx, startUpstream } from './support.js'

/*
 * A machine client in front of any upstream (docs/api-keys.md, docs/proxies.md, routes/auth/verify.ts):
 * the real curl, with an API key as Bearer, through the real nginx and Caddy running the documented
 * forward-auth configurations, to an upstream that echoes what it received. Revoked, the key stops at
 * the proxy.
 */

const run = promisify(execFile)

/** The real curl: the status and the body, as a script would see them. */
async function curl (port: number, key: string): Promise<{ status: number, body: string }> {
  const { stdout } = await run('curl', ['-s', '-o', '-', '-w', '\n%{http_code}', '-H', `Authorization: Bearer ${key}`, `http://127.0.0.1:${port}/reports/latest`])
  const at = stdout.lastIndexOf('\n')
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) }
}

interface Keyed { app: FastifyInstance, port: number, upstream: number, owner: string, id: string, key: string, revoke (): Promise<void> }

async function keyed (t: Test): Promise<Keyed> {
  const app = await build(t, { ENABLE_API_KEYS: true })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const upstream = await startUpstream(t)
  const user = await createUser(app, { roles: ['user', 'reports'] })
  const { access_token: token } = await login(app, user)
  const res = await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload: { name: 'reports job', roles: ['reports'] } })
  const { id, key } = res.json() as { id: string, key: string }
  const revoke = async () => {
    const deleted = await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${id}`, headers: authHeader(token) })
    t.equal(deleted.statusCode, 204)
  }
  return { app, port: (app.server.address() as AddressInfo).port, upstream, owner: user.id, id, key, revoke }
}

async function assertKeyPasses (t: Test, s: Keyed, port: number): Promise<void> {
  const passed = await curl(port, s.key)
  t.equal(passed.status, 200, 'curl with the key reaches the upstream')
  const seen = JSON.parse(passed.body) as { method: string, headers: Record<string, string> }
  t.strictSame(Object.fromEntries(Object.entries(seen.headers).filter(([name]) => name.startsWith('x-auth-') && name !== 'x-auth-roles')), {
    'x-auth-user-id': s.owner,
    'x-auth-email': seen.headers['x-auth-email'],
    'x-auth-session-id': s.id,
    'x-auth-superuser': 'false'
  }, 'the upstream sees the key\'s owner and the key id as the session')
  t.equal(seen.headers['x-auth-roles'], 'reports', 'and the key\'s roles')
  const forged = await curl(port, s.key.slice(0, -1) + (s.key.endsWith('0') ? '1' : '0'))
  t.equal(forged.status, 401, 'negative control: a key with a bad checksum is stopped at the proxy')
  await s.revoke()
  const started = Date.now()
  let refused = await curl(port, s.key)
  while (refused.status === 200 && Date.now() - started < 1000) refused = await curl(port, s.key)
  t.equal(refused.status, 401, `the revoked key is stopped at the proxy (${Date.now() - started} ms)`)
}

t.test('nginx auth_request (docs/proxies.md) passes a key-authenticated curl, and stops it once revoked', async (t) => {
  const s = await keyed(t)
  const port = await freePort()
  const { upstream, servers: block } = nginxParts()
  await startNginx(t, tempDir(t), nginxHttp({ gatehouse: s.port, upstream: s.upstream }, upstream, [{ port, block }]), [port])
  await assertKeyPasses(t, s, port)
})

t.test('Caddy forward_auth (docs/proxies.md) passes a key-authenticated curl, and stops it once revoked', async (t) => {
  const s = await keyed(t)
  const port = await freePort()
  await startCaddy(t, tempDir(t), caddySites({ gatehouse: s.port, upstream: s.upstream }, [{ port, block: fencedBlock('caddyfile') }]), [port])
  await assertKeyPasses(t, s, port)
})
