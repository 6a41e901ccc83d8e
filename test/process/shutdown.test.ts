import { readdirSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { tempDir, TEST_SECRET } from '../helper.js'
import { startServer } from './server-process.js'

const ADMIN = { email: 'root@example.com', password: 'Shutdown-Pass-9' }

/** Whether a new TCP connection to the port is accepted (true) or refused (false). */
function accepts (port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', (err: NodeJS.ErrnoException) => { if (err.code === 'ECONNREFUSED') resolve(false); else reject(err) })
  })
}

async function refusedWithin (port: number, ms: number): Promise<number> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!await accepts(port)) return Date.now()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`port ${port} still accepts connections after ${ms} ms`)
}

/**
 * Until /health answers 200: right after a start on a busy machine, @fastify/under-pressure may
 * still see the start-up's event-loop delay and answer 503 for a moment.
 */
async function ready (port: number): Promise<void> {
  const end = Date.now() + 10_000
  while (Date.now() < end) {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } })
    await res.arrayBuffer()
    if (res.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the server never became healthy')
}

t.test('SIGTERM during a login: the login completes, new connections are refused, the process exits 0 and the database is closed', async (t) => {
  const dataDir = tempDir(t)
  const server = startServer({
    DATA_DIR: dataDir,
    JWT_SECRET: TEST_SECRET,
    PORT: '0',
    LOG_LEVEL: 'info',
    LOG_REQUESTS: 'true',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    // an argon2 verify that takes a few hundred milliseconds, so the signal lands mid-request
    ARGON2_MEMORY_COST: '65536',
    ARGON2_TIME_COST: '4'
  })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const port = Number((await server.waitFor(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/))[1])
  await ready(port)

  let answeredAt = 0
  const login = fetch(`http://127.0.0.1:${port}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN)
  }).then(async (res) => {
    answeredAt = Date.now()
    return { status: res.status, cacheControl: res.headers.get('cache-control'), body: await res.json() as Record<string, unknown> }
  })
  // the server has the request (its log line is written in onRequest) and is now verifying the password
  const reqId = (await server.waitFor(/"reqId":"([\w-]+)","req":\{"method":"POST","url":"\/auth\/login".*"msg":"incoming request"/))[1]
  server.child.kill('SIGTERM')
  const signalledAt = Date.now()

  const refusedAt = await refusedWithin(port, 5_000)
  const answer = await login
  const exit = await Promise.race([
    server.exited,
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('no exit within 10 s')), 10_000))
  ])

  t.equal(answer.status, 200)
  t.equal(answer.cacheControl, 'no-store')
  t.same(Object.keys(answer.body).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_expires_at', 'refresh_token', 'token_type', 'user'])
  t.equal(answer.body.token_type, 'Bearer')
  t.equal(answer.body.expires_in, 900)
  t.match(answer.body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  t.match(answer.body.refresh_token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  t.match(answer.body.user, { email: ADMIN.email, name: 'Administrator', roles: ['admin'], is_superuser: true })
  t.ok(refusedAt < answeredAt, 'new connections were refused while the login was still running')
  const log = server.stdout()
  const completed = new RegExp(`"reqId":"${reqId}".*"msg":"request completed"`).exec(log)
  t.ok(completed !== null && log.indexOf('"msg":"closing"') < completed.index, 'the close began before the login answered')

  t.equal(exit.code, 0)
  t.equal(exit.signal, null)
  t.ok(exit.at - signalledAt < 10_000, 'exited within 10 s of the signal')

  // better-sqlite3 checkpoints and removes the WAL when the last connection closes cleanly
  t.same(readdirSync(dataDir).filter((name) => name.startsWith('gatehouse.db')), ['gatehouse.db'])
  const db = new Database(join(dataDir, 'gatehouse.db'))
  t.teardown(() => db.close())
  t.same(db.pragma('integrity_check'), [{ integrity_check: 'ok' }])
  t.same(db.prepare('SELECT email FROM users').all(), [{ email: ADMIN.email }])
})
