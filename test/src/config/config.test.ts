import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { parseDuration } from '../../../src/config/units.js'
import { takeNotices } from '../../../src/config/notices.js'
import { tempDir, TEST_SECRET } from '../../helper.js'
import { startServer } from '../../process/server-process.js'

function load (values: Record<string, unknown>) {
  return loadConfig({ fromEnvironment: false, values })
}

/** The error loadConfig throws for these values (the test fails if it does not throw). */
function configErrorOf (t: Test, values: Record<string, unknown>): string {
  try {
    load(values)
  } catch (err) {
    t.type(err, ConfigError)
    return (err as Error).message
  }
  t.fail(`expected a ConfigError for ${JSON.stringify(values)}`)
  return ''
}

t.test('the defaults are the documented ones (docs/operations.md)', async (t) => {
  const dir = tempDir(t)
  const config = load({ DATA_DIR: dir, JWT_SECRET: TEST_SECRET })
  t.equal(config.env, 'development')
  t.equal(config.production, false)
  t.equal(config.accessTtl, 900)
  t.equal(config.refreshTtl, 604800)
  t.equal(config.refreshReuseInterval, 10)
  t.equal(config.port, 3000)
  t.equal(config.host, '127.0.0.1')
  t.equal(config.enableRegister, false)
  t.same(config.defaultRoles, ['user'])
  t.same(config.loginRateLimit, { max: 60, windowSeconds: 60 })
  t.equal(config.loginMaxFailures, 5)
  t.equal(config.loginFailureWindow, 900)
  t.equal(config.bodyLimit, 65536)
  t.equal(config.logLevel, 'info')
  t.equal(config.validationErrorDetails, false)
  t.equal(config.admin, undefined)
  t.same(config.corsOrigins, [])
  t.equal(config.redisUrl, undefined)
  t.equal(config.dataDir, dir)
  t.equal(config.databaseUrl, `sqlite:${join(dir, 'gatehouse.db')}`)
})

t.test('durations are seconds or a number with s, m, h or d', async (t) => {
  t.equal(parseDuration('90s'), 90)
  t.equal(parseDuration('2h'), 7200)
  t.equal(parseDuration('1d'), 86400)
  t.equal(parseDuration('45'), 45)
  t.equal(parseDuration('15m'), 900)
  const config = load({
    DATA_DIR: tempDir(t),
    JWT_SECRET: TEST_SECRET,
    ACCESS_TOKEN_TTL: '90s',
    REFRESH_TOKEN_TTL: '2h',
    REFRESH_REUSE_INTERVAL: '45',
    LOGIN_FAILURE_WINDOW: '1d'
  })
  t.equal(config.accessTtl, 90)
  t.equal(config.refreshTtl, 7200)
  t.equal(config.refreshReuseInterval, 45)
  t.equal(config.loginFailureWindow, 86400)
})

t.test('settings given as strings, as the environment gives them, are read', async (t) => {
  const config = load({
    DATA_DIR: tempDir(t),
    JWT_SECRET: TEST_SECRET,
    PORT: '8080',
    ENABLE_REGISTER: 'true',
    DEFAULT_ROLES: 'user,reader',
    LOGIN_RATE_LIMIT: '10/h',
    CORS_ORIGINS: 'https://a.example, https://b.example',
    DATABASE_URL: 'sqlite::memory:'
  })
  t.equal(config.port, 8080)
  t.equal(config.enableRegister, true)
  t.same(config.defaultRoles, ['user', 'reader'])
  t.same(config.loginRateLimit, { max: 10, windowSeconds: 3600 })
  t.same(config.corsOrigins, ['https://a.example', 'https://b.example'])
  t.equal(config.databaseUrl, 'sqlite::memory:')
})

t.test('a bad value is a ConfigError naming the variable', async (t) => {
  const base = { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET }
  const cases: Array<[string, unknown]> = [
    ['ACCESS_TOKEN_TTL', '15x'],
    ['ACCESS_TOKEN_TTL', '0'],
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ENABLE_REGISTER', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOGIN_RATE_LIMIT', '60'],
    ['DEFAULT_ROLES', 'User'],
    ['APP_ENV', 'staging']
  ]
  for (const [name, value] of cases) {
    const message = configErrorOf(t, { ...base, [name]: value })
    t.match(message, new RegExp(`^Invalid configuration: ${name}\\b`), `${name}=${String(value)}`)
  }
})

t.test('a refresh lifetime not longer than the access lifetime is refused', async (t) => {
  const message = configErrorOf(t, { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, ACCESS_TOKEN_TTL: '1h', REFRESH_TOKEN_TTL: '60m' })
  t.equal(message, 'Invalid configuration: REFRESH_TOKEN_TTL must be longer than ACCESS_TOKEN_TTL')
})

t.test('a JWT_SECRET shorter than 32 bytes is refused', async (t) => {
  const dir = tempDir(t)
  t.equal(configErrorOf(t, { DATA_DIR: dir, JWT_SECRET: 'x'.repeat(31) }), 'Invalid configuration: JWT_SECRET must be at least 32 bytes')
  t.equal(configErrorOf(t, { DATA_DIR: dir, JWT_SECRET: 'x'.repeat(31), APP_ENV: 'production' }), 'Invalid configuration: JWT_SECRET must be at least 32 bytes')
  t.equal(load({ DATA_DIR: dir, JWT_SECRET: 'x'.repeat(32) }).jwtSecret, 'x'.repeat(32))
})

t.test('APP_ENV=production without JWT_SECRET is refused and generates nothing', async (t) => {
  const dir = tempDir(t)
  const message = configErrorOf(t, { DATA_DIR: dir, APP_ENV: 'production' })
  t.equal(message, 'Invalid configuration: JWT_SECRET is required when APP_ENV=production')
  t.throws(() => statSync(join(dir, 'jwt-secret')), { code: 'ENOENT' })
})

t.test('development without JWT_SECRET generates one in DATA_DIR (mode 0600) and reuses it', async (t) => {
  const dir = join(tempDir(t), 'nested')
  takeNotices()
  const first = load({ DATA_DIR: dir })
  t.ok(first.jwtSecret.length >= 43, 'at least 32 random bytes')
  const file = join(dir, 'jwt-secret')
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.equal(readFileSync(file, 'utf8').trim(), first.jwtSecret)
  const notices = takeNotices()
  t.equal(notices.length, 1)
  t.match(notices[0], /^JWT_SECRET is not set: generated a development secret in .*jwt-secret/)

  const second = load({ DATA_DIR: dir })
  t.equal(second.jwtSecret, first.jwtSecret)
  t.same(takeNotices(), [], 'no second notice for a secret that exists')
})

t.test('ADMIN_EMAIL without ADMIN_PASSWORD is refused', async (t) => {
  const message = configErrorOf(t, { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, ADMIN_EMAIL: 'root@example.com' })
  t.equal(message, 'Invalid configuration: ADMIN_PASSWORD is required when ADMIN_EMAIL is set')
})

async function withTimeout<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms) })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

t.test('the server refuses to start in production without JWT_SECRET', async (t) => {
  const dir = tempDir(t)
  const server = startServer({ APP_ENV: 'production', DATA_DIR: dir, PORT: '0' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const exit = await withTimeout(server.exited, 15_000, 'server exit')
  t.not(exit.code, 0)
  t.not(exit.code, null)
  t.match(server.stderr(), /gatehouse: Invalid configuration: JWT_SECRET is required when APP_ENV=production/)
  t.throws(() => statSync(join(dir, 'jwt-secret')), { code: 'ENOENT' })
})

t.test('the server refuses to start in production with a 10-byte JWT_SECRET', async (t) => {
  const server = startServer({ APP_ENV: 'production', JWT_SECRET: '0123456789', DATA_DIR: tempDir(t), PORT: '0' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const exit = await withTimeout(server.exited, 15_000, 'server exit')
  t.not(exit.code, 0)
  t.not(exit.code, null)
  t.match(server.stderr(), /gatehouse: Invalid configuration: JWT_SECRET must be at least 32 bytes/)
})

t.test('the server starts with a valid production config, answers /health and exits 0 on SIGTERM', async (t) => {
  const server = startServer({ APP_ENV: 'production', JWT_SECRET: TEST_SECRET, DATA_DIR: tempDir(t), PORT: '0', LOG_LEVEL: 'info' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const port = Number((await server.waitFor(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/, 15_000))[1])

  const res = await fetch(`http://127.0.0.1:${port}/health`)
  t.equal(res.status, 200)
  t.same(await res.json(), { status: 'ok' })

  server.child.kill('SIGTERM')
  const exit = await withTimeout(server.exited, 15_000, 'server exit')
  t.equal(exit.code, 0)
  t.match(server.stdout(), /"msg":"closing"/)
})
