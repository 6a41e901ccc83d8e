import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { PASSWORD, tempDir, TEST_SECRET, type TestContext } from '../helper.js'
import { startCaptureServer, type CaptureServer } from '../mail/smtp-capture.js'
import { REVOKED } from '../patterns.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'
import { resetTokenIn } from '../routes/auth/recovery/support.js'
import { startServer } from './server-process.js'
import { freshSchema } from './instances.js'

/*
 * Account recovery across real server processes on one PostgreSQL schema and one Redis, their
 * mail going to one real SMTP server in the test process: a reset on one instance is refused by
 * the other within a second, and two senders sharing one outbox deliver each mail exactly once.
 */

const RESET_URL = 'https://app.example.com/reset#token={token}'

interface Answer { status: number, body: unknown }
type Call = (method: string, path: string, options?: { body?: unknown, token?: string }) => Promise<Answer>

/** The real server as a child process, stopped by its PID with SIGTERM at teardown. */
async function startInstance (t: TestContext, name: string, env: Record<string, string>): Promise<Call> {
  const server = startServer(env)
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000)
    await server.exited
    clearTimeout(timer)
  })
  let origin: string | undefined
  for (let waited = 0; origin === undefined; waited += 50) {
    if (server.child.exitCode !== null) throw new Error(`${name} exited: ${server.stderr()}`)
    if (waited > 30_000) throw new Error(`${name} did not start: ${server.stderr()}`)
    origin = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(server.lines().find((r) => r.msg.startsWith('Server listening at'))?.msg ?? '')?.[1]
    if (origin === undefined) await sleep(50)
  }
  const base = origin
  for (let waited = 0; (await fetch(`${base}/health`)).status !== 200; waited += 100) {
    if (waited > 10_000) throw new Error(`${name} does not answer /health`)
    await sleep(100)
  }
  return async (method, path, { body, token } = {}) => {
    const headers: Record<string, string> = {}
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

async function startPair (t: Test, smtp: CaptureServer): Promise<[Call, Call]> {
  const env = {
    JWT_SECRET: TEST_SECRET,
    DATA_DIR: tempDir(t),
    DATABASE_URL: await freshSchema(t),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: uniquePrefix(t),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ENABLE_REGISTER: 'true',
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1',
    LOGIN_RATE_LIMIT: '1000/m',
    ENABLE_PASSWORD_RESET: 'true',
    PASSWORD_RESET_URL: RESET_URL,
    MAIL_RATE_LIMIT: '1000/h',
    SMTP_URL: smtp.url
  }
  const a = await startInstance(t, 'A', env)
  const b = await startInstance(t, 'B', env)
  return [a, b]
}

let users = 0
async function register (t: Test, call: Call): Promise<string> {
  const email = `recovery${++users}-${process.pid}@example.com`
  const res = await call('POST', '/auth/register', { body: { email, password: PASSWORD, name: 'Recovery User' } })
  t.equal(res.status, 201)
  return email
}

t.test('a reset on one instance: the other refuses the old access token within a second', async (t) => {
  const smtp = await startCaptureServer(t)
  const [a, b] = await startPair(t, smtp)
  const email = await register(t, a)
  const signedIn = await b('POST', '/auth/login', { body: { email, password: PASSWORD } })
  const token = (signedIn.body as { access_token: string }).access_token
  t.equal((await b('GET', '/auth/me', { token })).status, 200, 'B accepts the token before the reset')

  t.equal((await a('POST', '/auth/forgot-password', { body: { email } })).status, 202)
  const mail = await smtp.waitForMail((m) => m.envelope.to.includes(email))
  const reset = await a('POST', '/auth/reset-password', { body: { token: resetTokenIn(mail.text, RESET_URL), new_password: 'Brand-New-Secret-42' } })
  t.equal(reset.status, 200)
  const answered = Date.now()
  for (;;) {
    const res = await b('GET', '/auth/me', { token })
    if (res.status === 401) {
      t.same(res.body, REVOKED)
      break
    }
    t.equal(res.status, 200, 'accepted until the revocation arrives')
    if (Date.now() - answered >= 1000) {
      t.fail('B still accepts the token a second after the reset')
      break
    }
    await sleep(20)
  }
  t.ok(Date.now() - answered < 1000, `B refused it after ${Date.now() - answered} ms`)
})

t.test('two instances sharing one outbox: 50 forgot-password requests, exactly 50 mails, none twice', async (t) => {
  const smtp = await startCaptureServer(t)
  const [a, b] = await startPair(t, smtp)
  const emails: string[] = []
  for (let i = 0; i < 50; i++) emails.push(await register(t, i % 2 === 0 ? a : b))
  const answers = await Promise.all(emails.map(async (email, i) => await (i % 2 === 0 ? b : a)('POST', '/auth/forgot-password', { body: { email } })))
  t.same(answers.map((res) => res.status), Array(50).fill(202))
  for (const email of emails) await smtp.waitForMail((m) => m.envelope.to.includes(email), 30_000)
  // anything sent twice would arrive just after the first copy: give a duplicate the time to come
  await sleep(1500)
  const resets = smtp.mails.filter((m) => m.subject === 'Reset your gatehouse password')
  t.equal(resets.length, 50, 'exactly 50 mails')
  t.same(resets.map((m) => m.to).sort(), [...emails].sort(), 'one per address, none twice')
})
