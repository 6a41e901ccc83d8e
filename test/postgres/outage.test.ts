import { once } from 'node:events'
import { createServer, connect, type Server, type Socket } from 'node:net'
import t from 'tap'
import { authHeader, buildFrom, createUser, login, postgresUrlFor, prepareDatabase, tempDir, testConfig, type TestContext } from '../helper.js'

/*
 * A real PostgreSQL outage, made and undone inside the test: the app reaches the server through
 * a TCP proxy that the test cuts (every connection reset, new ones refused) and restores on the
 * same port. Runs in the PostgreSQL pass only (test/passes.sh).
 */

const UNAVAILABLE = { error: 'Service Unavailable', message: 'The service is temporarily unavailable', code: 'service_unavailable' }

interface Proxy { port: number, cut: () => Promise<void>, restore: () => Promise<void> }

async function startProxy (t: TestContext, target: { host: string, port: number }): Promise<Proxy> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream).pipe(client)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  const cut = async () => {
    const closed = new Promise((resolve) => server.close(resolve))
    for (const socket of sockets) socket.resetAndDestroy()
    await closed
  }
  const restore = async () => {
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
  }
  t.teardown(async () => { if (server.listening) await cut() })
  return { port, cut, restore }
}

t.test('while PostgreSQL is unreachable /ready and the routes that need it answer 503, and all recover with it', async (t) => {
  const dataDir = tempDir(t)
  const direct = new URL(postgresUrlFor(dataDir))
  await prepareDatabase(t, { databaseUrl: direct.href })
  const proxy = await startProxy(t, { host: direct.hostname, port: Number(direct.port || 5432) })
  const proxied = new URL(direct.href)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(proxy.port)
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, DATABASE_URL: proxied.href }))
  t.equal(app.store.kind, 'postgres')

  const user = await createUser(app, { roles: ['admin'] })
  const tokens = await login(app, user)
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok' })

  await proxy.cut()
  const requests = [
    { method: 'GET', url: '/ready' },
    { method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } },
    { method: 'GET', url: '/auth/me', headers: authHeader(tokens.access_token) },
    { method: 'POST', url: '/auth/refresh', payload: { refresh_token: tokens.refresh_token } },
    { method: 'GET', url: '/api/users', headers: authHeader(tokens.access_token) }
  ] as const
  for (const request of requests) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 503, `${request.method} ${request.url} during the outage`)
    t.strictSame(res.json(), UNAVAILABLE, `${request.method} ${request.url} body`)
  }
  // the liveness probe needs no database: the process is fine, only not ready
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)

  await proxy.restore()
  const back = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(back.statusCode, 200)
  t.same(back.json(), { status: 'ok' })
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(tokens.access_token) })
  t.equal(me.statusCode, 200)
  t.equal(me.json().email, user.email)
  const again = await login(app, user)
  t.equal(again.response.statusCode, 200)
})
