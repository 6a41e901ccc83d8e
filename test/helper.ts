import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type LightMyRequestResponse } from 'fastify'
import { Kysely, type Dialect, type RawBuilder } from 'kysely'
import pg from 'pg'
import configPlugin from '../plugins/config.js'
import { buildApp, type BuildOptions } from '../src/app.js'
import { loadConfig, type Config } from '../src/config/config.js'
import type { Claims } from '../src/tokens/claims.js'
import type { SignInOutcome } from '../src/accounts/sign-in.js'
import type { TokenPair } from '../src/sessions/session-service.js'
import { assertContract, watchContract } from './contract.js'

/** A tap test, as far as the helpers need it. */
export interface TestContext { teardown (fn: () => unknown): void }

/*
 * `npm test` runs every file on SQLite, then the storage folders again with GATEHOUSE_TEST_STORE=postgres
 * against TEST_DATABASE_URL (test/passes.sh). In the PostgreSQL pass every data folder a test makes is
 * mapped to a fresh schema of its own, so the files need not know which database they run on.
 */
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL
if (process.env.CI === 'true' && !TEST_DATABASE_URL) {
  throw new Error('CI=true but TEST_DATABASE_URL is unset: the PostgreSQL pass cannot be skipped in CI')
}
export const STORE_KIND: 'sqlite' | 'postgres' = process.env.GATEHOUSE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite'
if (STORE_KIND === 'postgres' && !TEST_DATABASE_URL) throw new Error('GATEHOUSE_TEST_STORE=postgres needs TEST_DATABASE_URL')

/** 32 random bytes in base64, as `openssl rand -base64 32` makes one: production's entropy rule takes it */
export const TEST_SECRET = 'h1n4UY6vHYmRekuIGUCkxxvmI5zvYA5jNRF7JAtJCqM='
export const PASSWORD = 'Correct-Horse-9'

/** A fresh data folder per call, removed at teardown. */
export function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * The test configuration: a fresh SQLite file of its own, a fixed secret, and argon2id with
 * cheap parameters (still the real hasher). Never reads process.env or .env.
 */
export function testConfig (t: TestContext, values: Record<string, unknown> = {}): Config {
  const dataDir = typeof values.DATA_DIR === 'string' ? values.DATA_DIR : tempDir(t)
  return loadConfig({
    fromEnvironment: false,
    values: {
      DATA_DIR: dataDir,
      // a small pool: two test files at once, each with several apps, stay far below max_connections
      ...(STORE_KIND === 'postgres' && { DATABASE_URL: postgresUrlFor(dataDir), DATABASE_POOL_MAX: 4 }),
      JWT_SECRET: TEST_SECRET,
      LOG_LEVEL: 'silent',
      ARGON2_MEMORY_COST: 1024,
      ARGON2_TIME_COST: 1,
      // a loaded test machine lags past any threshold: shedding is tested on its own (test/plugins/under-pressure.test.ts)
      MAX_EVENT_LOOP_DELAY: 0,
      ...values
    }
  })
}

export interface BuildHooks extends BuildOptions {
  /** runs before `ready()`, while routes can still be added (a test-only route, for instance) */
  setup?: (app: FastifyInstance) => unknown
}

/** buildApp on the test configuration, ready, closed at teardown; its answers are held to its OpenAPI document. */
export async function build (t: TestContext, values: Record<string, unknown> = {}, hooks: BuildHooks = {}): Promise<FastifyInstance> {
  return await buildFrom(t, testConfig(t, values), hooks)
}

export async function buildFrom (t: TestContext, config: Config, options: BuildHooks = {}): Promise<FastifyInstance> {
  await prepareDatabase(t, config)
  const app = await buildApp(config, options)
  t.teardown(() => app.close())
  await options.setup?.(app)
  // every answer is checked against the app's own document (test/contract.ts), after every other
  // onSend hook, a test's own included; a mismatch fails the test at teardown
  watchContract(app)
  t.teardown(() => { assertContract(app) })
  await app.ready()
  return app
}

/**
 * A bare Fastify with the test configuration and only `plugins`, for a plugin tested on its own;
 * `setup` adds the routes that exercise it. Ready, closed at teardown.
 */
export async function buildBare (t: TestContext, plugins: FastifyPluginAsync[], setup: (app: FastifyInstance) => unknown, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(configPlugin, { config: testConfig(t, values) })
  for (const plugin of plugins) await app.register(plugin)
  await setup(app)
  await app.ready()
  return app
}

/** The schema of a data folder in the PostgreSQL pass: one per folder, so two apps on one folder share it. */
const schemaOfDir = new Map<string, string>()
const schemaOfUrl = new Map<string, string>()
const created = new Map<string, Promise<void>>()
let admin: pg.Pool | undefined

/**
 * This test process's own database in the PostgreSQL pass. Kysely's migrator lists the tables of
 * every schema of its database and casts their names, so a schema that another test process
 * dropped mid-listing failed the migration ("schema … does not exist"). With a database per
 * process each catalog is its own; the schemas inside it come and go between one file's tests,
 * which run one after another. test/passes.sh drops its run's databases after the pass (dropping
 * them from the process itself raced the pools' own shutdown: 'error thrown in teardown').
 */
const FILE_DATABASE = `gh_${runId()}${randomBytes(6).toString('hex')}`

/**
 * `<id>_` of GATEHOUSE_TEST_RUN_ID, which test/passes.sh sets for its run: the clean-up
 * (test/drop-test-databases.sh) drops that run's databases only, not those of another run on the server.
 */
function runId (): string {
  const id = process.env.GATEHOUSE_TEST_RUN_ID
  if (id === undefined || id === '') return ''
  if (!/^[a-z0-9]{1,16}$/.test(id)) throw new Error(`GATEHOUSE_TEST_RUN_ID must be 1 to 16 lower-case letters or digits, not ${id}`)
  return `${id}_`
}
let fileDatabase: Promise<void> | undefined
let schemas: pg.Pool | undefined

function fileDatabaseUrl (): URL {
  const url = new URL(TEST_DATABASE_URL ?? '')
  url.pathname = `/${FILE_DATABASE}`
  return url
}

/** The same data folder gives the same URL, as it gives the same SQLite file on the other pass. */
export function postgresUrlFor (dataDir: string): string {
  let schema = schemaOfDir.get(dataDir)
  if (schema === undefined) {
    schema = `gh_${randomBytes(8).toString('hex')}`
    schemaOfDir.set(dataDir, schema)
  }
  const url = fileDatabaseUrl()
  url.searchParams.set('options', `-c search_path=${schema}`)
  schemaOfUrl.set(url.href, schema)
  return url.href
}

function adminPool (): pg.Pool {
  // allowExitOnIdle: an idle pool must not keep the test process alive after its last test
  admin ??= new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, allowExitOnIdle: true })
  return admin
}

async function schemaPool (): Promise<pg.Pool> {
  fileDatabase ??= (async () => {
    await adminPool().query(`create database ${FILE_DATABASE}`)
  })()
  await fileDatabase
  schemas ??= new pg.Pool({ connectionString: fileDatabaseUrl().href, max: 2, allowExitOnIdle: true })
  return schemas
}

/**
 * PostgreSQL pass: creates the schema the configuration names (once, however many apps share
 * it) and drops it when the test that created it ends. SQLite needs nothing: the file appears.
 */
export async function prepareDatabase (t: TestContext, config: Pick<Config, 'databaseUrl'>): Promise<void> {
  const schema = schemaOfUrl.get(config.databaseUrl)
  if (schema === undefined) return
  let ready = created.get(schema)
  if (ready === undefined) {
    ready = schemaPool().then(async (pool) => { await pool.query(`create schema ${schema}`) })
    created.set(schema, ready)
    t.teardown(async () => {
      created.delete(schema)
      await (await schemaPool()).query(`drop schema if exists ${schema} cascade`)
    })
  }
  await ready
}

/**
 * Raw SQL on the database of a configuration, for the few tests that must look behind the
 * service (rows as stored) or change a row behind its back. Write portable SQL.
 */
export async function rawSql<R> (config: Config, query: RawBuilder<R>): Promise<R[]> {
  let dialect: Dialect
  if (config.databaseUrl.startsWith('sqlite:')) {
    const { openSqlite } = await import('../src/db/sqlite.js')
    dialect = openSqlite(config.databaseUrl.slice('sqlite:'.length)).dialect
  } else {
    const { createPostgresDialect } = await import('../src/db/postgres.js')
    dialect = createPostgresDialect(config.databaseUrl, { poolMax: 1 })
  }
  const db = new Kysely<unknown>({ dialect })
  try {
    return (await query.execute(db)).rows
  } finally {
    await db.destroy()
  }
}

/** Environment for a child process (the CLI, the server) on the database of this data folder. */
export async function databaseEnv (t: TestContext, dataDir: string): Promise<Record<string, string>> {
  if (STORE_KIND === 'sqlite') return { DATA_DIR: dataDir }
  const databaseUrl = postgresUrlFor(dataDir)
  await prepareDatabase(t, { databaseUrl })
  return { DATA_DIR: dataDir, DATABASE_URL: databaseUrl }
}

export interface CreatedUser { id: string, email: string, password: string }

let counter = 0

/** Creates a user straight through the service (the users API is under test elsewhere). */
export async function createUser (app: FastifyInstance, options: { email?: string, name?: string, roles?: string[], isSuperuser?: boolean, password?: string } = {}): Promise<CreatedUser> {
  const email = options.email ?? `user${++counter}-${process.pid}@example.com`
  const password = options.password ?? PASSWORD
  const user = await app.services.users.create({
    email,
    password,
    name: options.name ?? 'Test User',
    roles: options.roles ?? ['user'],
    isSuperuser: options.isSuperuser ?? false
  })
  return { id: user.id, email: user.email, password }
}

export interface Tokens { access_token: string, refresh_token: string }

export async function login (app: FastifyInstance, user: { email: string, password: string }, extra: Record<string, unknown> = {}): Promise<Tokens & { response: LightMyRequestResponse }> {
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password, ...extra } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
  const body = response.json() as Tokens
  return { access_token: body.access_token, refresh_token: body.refresh_token, response }
}

/**
 * The exact TokenResponse of a sign-in for `user`: the generated values (the tokens, the times)
 * come from `body`, whose forms the caller checks; the rest is spelled out, so
 * `t.strictSame(body, tokenResponse(body, user))` fails on any wrong, missing or extra field.
 */
export function tokenResponse (body: Record<string, unknown>, user: Record<string, unknown>): Record<string, unknown> {
  return {
    access_token: body.access_token,
    refresh_token: body.refresh_token,
    token_type: 'Bearer',
    expires_in: body.expires_in,
    expires_at: body.expires_at,
    refresh_expires_at: body.refresh_expires_at,
    user
  }
}

/** The payload of a JWT, read without verifying it (the test checks what the server signed). */
export function claimsOf (token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Claims
}

export function authHeader (token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` }
}

/** Each Set-Cookie header as { name, value, attributes } with attribute names lower-cased. */
export function setCookies (res: LightMyRequestResponse): { name: string, value: string, attributes: Record<string, string | true> }[] {
  const header = res.headers['set-cookie']
  const lines = header === undefined ? [] : [header].flat()
  return lines.map((line) => {
    const [pair = '', ...rest] = line.split(';').map((part) => part.trim())
    const eq = pair.indexOf('=')
    const attributes: Record<string, string | true> = {}
    for (const part of rest) {
      const at = part.indexOf('=')
      if (at === -1) attributes[part.toLowerCase()] = true
      else attributes[part.slice(0, at).toLowerCase()] = part.slice(at + 1)
    }
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes }
  })
}

/** A cookie value from a response's Set-Cookie headers. */
export function cookieOf (response: LightMyRequestResponse, name: string): { value: string, [key: string]: unknown } | undefined {
  return response.cookies.find((c) => c.name === name) as { value: string } | undefined
}

/** POST /api/auth/change-password as the holder of `accessToken`. */
export async function changePassword (app: FastifyInstance, accessToken: string, currentPassword: string, newPassword: string): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: '/api/auth/change-password',
    headers: authHeader(accessToken),
    payload: { current_password: currentPassword, new_password: newPassword }
  })
}

/**
 * Every string a regex runs on while `fn` runs: RegExp#test and String#match, replace and split
 * all call RegExp#exec, so wrapping it sees them all. Restored before any assertion runs.
 */
export async function regexInputsDuring (fn: () => unknown): Promise<string[]> {
  const exec = RegExp.prototype.exec
  const inputs: string[] = []
  // eslint-disable-next-line no-extend-native -- a probe for the length of fn, restored below
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    inputs.push(String(input))
    return exec.call(this, input)
  }
  try {
    await fn()
  } finally {
    // eslint-disable-next-line no-extend-native -- the original, put back
    RegExp.prototype.exec = exec
  }
  return inputs
}

/** Sends raw bytes over a real socket to a listening app: the point is what Node's parser does before Fastify. */
export async function rawRequest (app: FastifyInstance, text: string): Promise<string> {
  const { port } = app.server.address() as { port: number }
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => { socket.end(text) })
    let received = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('close', () => { resolve(received) })
    socket.on('error', reject)
  })
}

/** The session a sign-in started; fails the test when it ended in the second-factor challenge instead. */
export async function sessionOf (outcome: Promise<SignInOutcome>): Promise<TokenPair> {
  const settled = await outcome
  if (settled.status !== 'signed_in') throw new Error('the sign-in asked for a second factor')
  return settled.pair
}
