#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { AuditTrail, CLI_CONTEXT } from './audit.js'
import { ruleFormats } from './validation/index.js'
import { ConfigError, loadConfig } from './config.js'
import { connect } from './db/store.js'
import { createServices } from './services/index.js'

const USAGE = `Usage:
  gatehouse migrate
      apply the database migrations (DATABASE_URL) and exit
  gatehouse user create --email <email> --name <name> [--role <role>]... [--superuser]
      create a user; the password is read from standard input (one line)
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
