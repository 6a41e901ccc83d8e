import { spawn } from 'node:child_process'
import t from 'tap'
import { databaseEnv, tempDir } from '../helper.js'
import { startCaptureServer } from '../mail/smtp-capture.js'
import { selfSignedCert } from '../mail/tls.js'
import { ROOT, TSX } from './server-process.js'

interface Run { code: number | null, stdout: string, stderr: string }

/** The real CLI with exactly this environment (nothing of the test process leaks in). */
async function cli (args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, [...TSX, 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

t.test('mail test delivers a test mail through SMTP_URL and says so', async (t) => {
  const smtp = await startCaptureServer(t)
  const run = await cli(['mail', 'test', '--to', 'ops@example.com'], { ...await databaseEnv(t, tempDir(t)), SMTP_URL: smtp.url, MAIL_FROM: 'Example Auth <auth@example.com>' })
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stdout, 'sent a test mail to ops@example.com\n')
  const mail = await smtp.waitForMail()
  t.equal(mail.from, '"Example Auth" <auth@example.com>')
  t.equal(mail.to, 'ops@example.com')
  t.equal(mail.subject, 'Test mail from gatehouse')
  t.equal(mail.text, 'This is a test mail from gatehouse: mail delivery works.\n\n-- \ngatehouse\n')
})

t.test('mail test reports the server\'s failure and exits 1', async (t) => {
  const smtp = await startCaptureServer(t)
  await smtp.stop()
  const run = await cli(['mail', 'test', '--to', 'ops@example.com'], { ...await databaseEnv(t, tempDir(t)), SMTP_URL: smtp.url })
  t.equal(run.code, 1)
  t.match(run.stderr, /(^|\n)gatehouse: delivery failed: E[A-Z]+ connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/)
  t.notMatch(run.stderr, /will retry/, 'the command reports the failure once')
})

t.test('a private CA is trusted through NODE_EXTRA_CA_CERTS; without it the certificate is refused', async (t) => {
  const tls = selfSignedCert(t)
  const smtp = await startCaptureServer(t, { tls })
  const env = { ...await databaseEnv(t, tempDir(t)), SMTP_URL: `${smtp.url}?requireTLS=true` }
  const refused = await cli(['mail', 'test', '--to', 'ops@example.com'], env)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /delivery failed: .*self[- ]signed certificate/i)
  t.equal(smtp.mails.length, 0)

  const trusted = await cli(['mail', 'test', '--to', 'ops@example.com'], { ...env, NODE_EXTRA_CA_CERTS: tls.certFile })
  t.equal(trusted.code, 0, trusted.stderr)
  const mail = await smtp.waitForMail()
  t.equal(mail.secure, true)
})

t.test('in development without SMTP_URL the test mail goes to the log; a bad --to is refused', async (t) => {
  const env = await databaseEnv(t, tempDir(t))
  const run = await cli(['mail', 'test', '--to', 'dev@example.com'], env)
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stdout, 'sent a test mail to dev@example.com (to the log: SMTP_URL is unset)\n')
  t.match(JSON.parse(run.stderr.trim().split('\n').at(-1) ?? '{}'), { mail: { to: 'dev@example.com', subject: 'Test mail from gatehouse' } })

  const bad = await cli(['mail', 'test', '--to', 'not-an-address'], env)
  t.equal(bad.code, 2)
  t.equal(bad.stderr, 'gatehouse: --to must be a valid email address\nusage: gatehouse mail test --to <email>\n')
})
