import { request as httpRequest } from 'node:http'
import t from 'tap'
import { databaseEnv, tempDir, TEST_SECRET } from '../helper.js'
import { startServer, type LogLine, type ServerProcess } from './server-process.js'

const ADMIN = { email: 'root@example.com', password: 'Admin-Pass-42!' }
const START_MS = 60_000

/** Polls the log until `found` returns a value; fails with the log if it never does. */
async function waitFor<T> (server: ServerProcess, what: string, found: (lines: LogLine[]) => T | undefined): Promise<T> {
  const deadline = Date.now() + START_MS
  for (;;) {
    const value = found(server.lines())
    if (value !== undefined) return value
    if (Date.now() > deadline || server.child.exitCode !== null) throw new Error(`${what}: not seen\n${server.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** One request on a connection of its own, so the primary's round-robin hands each to the next worker. */
async function call (port: number, method: string, path: string, options: { token?: string, body?: unknown } = {}) {
  return await new Promise<{ status: number, body: unknown }>((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: false,
      headers: {
        connection: 'close',
        ...(payload !== undefined && { 'content-type': 'application/json' }),
        ...(options.token !== undefined && { authorization: `Bearer ${options.token}` })
      }
    }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

const listening = (lines: LogLine[]) => lines.filter((l) => /^Server listening at /.test(l.msg ?? ''))

t.test('WORKERS=2: two workers share one port and one database and its revocations, a dead one is restarted, SIGTERM drains all and exits 0', async (t) => {
  const dataDir = tempDir(t)
  const server = startServer({
    ...await databaseEnv(t, dataDir),
    WORKERS: '2',
    PORT: '0',
    JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: 'info',
    LOG_REQUESTS: 'true',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1'
  })
  t.teardown(() => { if (server.child.exitCode === null) process.kill(server.child.pid ?? 0, 'SIGKILL') })

  const started = await waitFor(server, 'two workers listening', (lines) => listening(lines).length >= 2 ? listening(lines) : undefined)
  const primary = server.child.pid
  const workers = new Set(started.map((l) => l.pid))
  t.equal(workers.size, 2, 'two worker processes')
  t.notOk(workers.has(primary ?? 0), 'the primary does not serve')
  const ports = new Set(started.map((l) => /:(\d+)$/.exec(l.msg ?? '')?.[1]))
  t.equal(ports.size, 1, 'one shared port')
  const port = Number([...ports][0])

  // readiness as a load balancer sees it: a fresh worker on a busy machine may still shed load (503)
  const deadline = Date.now() + START_MS
  let ready = 0
  while (ready < 2 && Date.now() < deadline) {
    if ((await call(port, 'GET', '/ready')).status === 200) ready++
    else await new Promise((resolve) => setTimeout(resolve, 200))
  }

  // both workers bootstrapped the admin at once: exactly one exists
  const signIn = await call(port, 'POST', '/auth/login', { body: ADMIN })
  t.equal(signIn.status, 200)
  const { access_token: token, user } = signIn.body as { access_token: string, user: { id: string, created_at: string } }
  const me = await call(port, 'GET', '/auth/me', { token })
  t.equal(me.status, 200)
  t.strictSame(me.body, {
    id: user.id,
    email: ADMIN.email,
    name: 'Administrator',
    age: null,
    roles: ['admin'],
    is_superuser: true,
    email_verified: false,
    created_at: user.created_at,
    updated_at: user.created_at
  })
  for (let i = 0; i < 4; i++) {
    const list = await call(port, 'GET', '/api/users', { token })
    t.equal(list.status, 200)
    t.strictSame((list.body as { data: unknown[] }).data, [me.body])
  }
  const answered = new Set(server.lines().filter((l) => l.msg === 'request completed').map((l) => l.pid))
  t.strictSame([...answered].sort(), [...workers].sort(), 'requests were answered by both workers')

  // a worker that dies is replaced, and the service keeps answering
  const [victim] = workers
  process.kill(victim ?? 0, 'SIGKILL')
  const replacement = await waitFor(server, 'a replacement worker', (lines) => listening(lines).find((l) => !workers.has(l.pid)))
  t.match(server.lines().find((l) => l.msg === 'worker died; restarting it'), { worker: victim, signal: 'SIGKILL' })
  t.equal(replacement.msg, `Server listening at http://127.0.0.1:${port}`)
  t.equal((await call(port, 'GET', '/auth/me', { token })).status, 200)

  // a logout answered by one worker reaches the other within a second (each keeps its own index)
  t.equal((await call(port, 'POST', '/auth/logout', { token })).status, 204)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const seenBefore = server.lines().length
  for (let i = 0; i < 6; i++) {
    t.strictSame(await call(port, 'GET', '/auth/me', { token }), {
      status: 401,
      body: { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }
    })
  }
  const refusedBy = new Set(server.lines().slice(seenBefore).filter((l) => l.msg === 'request completed').map((l) => l.pid))
  t.equal(refusedBy.size, 2, 'both workers refused the revoked token')

  process.kill(primary ?? 0, 'SIGTERM')
  const exit = await server.exited
  t.strictSame({ code: exit.code, signal: exit.signal }, { code: 0, signal: null })
  const lines = server.lines()
  const closing = lines.filter((l) => l.msg === 'closing').map((l) => l.pid).sort()
  t.strictSame(closing, [replacement.pid, ...[...workers].filter((pid) => pid !== victim)].sort(), 'each live worker closed gracefully')
  t.equal(lines.filter((l) => l.msg === 'all workers stopped' && l.pid === primary).length, 1)
})
