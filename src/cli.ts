#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { AuditTrail, CLI_CONTEXT } from './audit.js'
import { ruleFormats } from './validation/index.js'
import { ConfigError, loadConfig } from './config.js'
import { connect } from './db/store.js'
import { testMail } from './mail/templates.js'
import { createServices } from './services/index.js'

const USAGE = `Usage:
  gatehouse migrate
      apply the database migrations (DATABASE_URL) and exit
  gatehouse user create --email <email> --name <name> [--role <role>]... [--superuser]
      create a user; the password is read from standard input (one line)
  gatehouse mail test --to <email>
      queue a test mail and deliver it now through SMTP_URL; exits 1 with the server's answer if it fails
`

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0] ?? ''
}

async function createUser (args: string[]): Promise<string> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string', multiple: true },
      superuser: { type: 'boolean', default: false }
    }
  })
  if (!values.email || !values.name) throw new ConfigError('--email and --name are required')
  // the same email rule as the API, so the CLI cannot create an account nobody can sign in to
  const isEmail = ruleFormats.email?.validate
  if (typeof isEmail === 'function' && !isEmail(values.email)) throw new ConfigError('--email must be a valid email address')
  const password = await readStdin()
  if (password.length < 8 || password.length > 1024) throw new ConfigError('the password (stdin) must be 8 to 1024 characters')
  const config = loadConfig()
  const store = await connect(config.databaseUrl, { poolMax: config.databasePoolMax })
  try {
    await store.migrate()
    // the server's own services, so the CLI creates a user exactly as the API does, audit event included
    const { users, events } = await createServices({ config, store, log: { info () {}, warn () {} } })
    const trail = new AuditTrail(store, { info () {}, error (fields, message) { process.stderr.write(`gatehouse: ${message}\n`) } })
    events.on('audit', ({ record, context }) => { trail.sink(record, context) })
    const user = await users.create({
      email: values.email,
      password,
      name: values.name,
      roles: values.role ?? config.defaultRoles,
      isSuperuser: values.superuser
    }, { context: CLI_CONTEXT })
    await trail.flush()
    return `created user ${user.id} <${user.email}>`
  } finally {
    await store.close()
  }
}

const MAIL_TEST_TIMEOUT_MS = 60_000

/**
 * Queues a test mail and runs a sender until the row is settled or its first attempt failed.
 * A failed mail stays queued (a running server retries it); the command reports why it failed.
 */
async function mailTest (args: string[]): Promise<string> {
  const { values } = parseArgs({ args, options: { to: { type: 'string' } } })
  const isEmail = ruleFormats.email?.validate
  if (!values.to || (typeof isEmail === 'function' && !isEmail(values.to))) throw new ConfigError('--to must be a valid email address')
  const config = loadConfig()
  if (config.production && config.mail.smtp === undefined) throw new ConfigError('SMTP_URL is unset: in production no mail is sent')
  const store = await connect(config.databaseUrl, { poolMax: config.databasePoolMax })
  try {
    await store.migrate()
    // without SMTP_URL (development) the mail goes to this log, on stderr; a failure is reported below instead
    const log = { info () {}, warn (fields: object, message: string) { if ('mail' in fields) process.stderr.write(JSON.stringify({ ...fields, msg: message }) + '\n') } }
    const { mail } = await createServices({ config, store, log })
    const id = await store.mailOutbox.enqueue(testMail({ to: values.to }))
    mail.start()
    try {
      const deadline = Date.now() + MAIL_TEST_TIMEOUT_MS
      for (;;) {
        const row = await store.mailOutbox.get(id)
        if (row?.sentAt) return `sent a test mail to ${values.to}${config.mail.smtp === undefined ? ' (to the log: SMTP_URL is unset)' : ''}`
        if (row?.lastError) throw new Error(`delivery failed: ${row.lastError}`)
        if (Date.now() > deadline) throw new Error(`no answer from the SMTP server within ${MAIL_TEST_TIMEOUT_MS / 1000} s`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    } finally {
      await mail.close()
    }
  } finally {
    await store.close()
  }
}

async function migrate (): Promise<string> {
  const config = loadConfig()
  const store = await connect(config.databaseUrl, { poolMax: config.databasePoolMax })
  try {
    const applied = await store.migrate()
    return applied.length === 0 ? 'database is up to date' : `applied ${applied.join(', ')}`
  } finally {
    await store.close()
  }
}

async function main (argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv
  try {
    if (command === 'migrate') process.stdout.write(await migrate() + '\n')
    else if (command === 'user' && sub === 'create') process.stdout.write(await createUser(rest) + '\n')
    else if (command === 'mail' && sub === 'test') process.stdout.write(await mailTest(rest) + '\n')
    else {
      process.stderr.write(USAGE)
      return 2
    }
    return 0
  } catch (err) {
    process.stderr.write(`gatehouse: ${(err as Error).message}\n`)
    return 1
  }
}

process.exitCode = await main(process.argv.slice(2))
