import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config/config.js'
import { authHeader, build, createUser, login } from '../helper.js'

const METRICS_TOKEN = 'scrape-token-0123456789abcdef'
const ENABLED = { METRICS_ENABLED: true, METRICS_TOKEN }
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8'

/** `null`: no Authorization header at all. */
async function scrape (app: FastifyInstance, token: string | null = METRICS_TOKEN) {
  return await app.inject({ method: 'GET', url: '/metrics', headers: token === null ? {} : authHeader(token) })
}

async function refresh (app: FastifyInstance, token: string) {
  return await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token } })
}

/** The service's own samples, without the histogram's buckets and sum (their values are timings). */
function serviceSamples (text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('gatehouse_') && !/_bucket\{|_sum\{/.test(line))
}

/** The password census gauge's samples: every algorithm, with these counts and 0 for the rest. */
function census (counts: Record<string, number>): string[] {
  return ['argon2id', 'argon2i', 'argon2d', 'bcrypt', 'scrypt', 'pbkdf2_sha256', 'pbkdf2_sha512', 'none']
    .map((algorithm) => `gatehouse_users_by_password_hash{algorithm="${algorithm}"} ${counts[algorithm] ?? 0}`)
}

t.test('GET /metrics is an unknown route (404) unless METRICS_ENABLED', async (t) => {
  const app = await build(t)
  const res = await scrape(app)
  t.equal(res.statusCode, 404)
  t.strictSame(res.json(), { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' })
  t.equal(app.metrics, null, 'no registry is built')
})

t.test('METRICS_ENABLED without METRICS_TOKEN stops the start, naming the variable', async (t) => {
  t.throws(() => loadConfig({ fromEnvironment: false, values: { JWT_SECRET: 'x'.repeat(32), METRICS_ENABLED: true } }),
    new ConfigError('Invalid configuration: METRICS_TOKEN is required when METRICS_ENABLED=true'))
  t.throws(() => loadConfig({ fromEnvironment: false, values: { JWT_SECRET: 'x'.repeat(32), METRICS_ENABLED: true, METRICS_TOKEN: 'short' } }),
    new ConfigError('Invalid configuration: METRICS_TOKEN must NOT have fewer than 16 characters'))
})

t.test('GET /metrics needs METRICS_TOKEN as a Bearer token: absent, wrong or a user JWT get 401', async (t) => {
  const app = await build(t, ENABLED)
  const missing = await scrape(app, null)
  t.equal(missing.statusCode, 401)
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.strictSame(missing.json(), { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' })

  const invalid = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
  const challenge = 'Bearer realm="gatehouse", error="invalid_token", error_description="The token is invalid"'
  const admin = await createUser(app, { roles: ['admin'], isSuperuser: true })
  for (const [name, headers] of [
    ['a wrong token', authHeader(`${METRICS_TOKEN}x`)],
    ['an admin access token', authHeader((await login(app, admin)).access_token)],
    ['another scheme', { authorization: `Basic ${METRICS_TOKEN}` }]
  ] as const) {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers })
    t.equal(res.statusCode, 401, name)
    t.equal(res.headers['www-authenticate'], challenge, name)
    t.strictSame(res.json(), invalid, name)
  }
  const head = await app.inject({ method: 'HEAD', url: '/metrics' })
  t.equal(head.statusCode, 401, 'the HEAD route Fastify adds is protected too')
})

t.test('GET /metrics with the token answers the Prometheus text format, zeros before any traffic', async (t) => {
  const app = await build(t, ENABLED)
  const res = await scrape(app)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], PROMETHEUS_TEXT)
  t.strictSame(serviceSamples(res.body), [
    'gatehouse_login_attempts_total{outcome="success"} 0',
    'gatehouse_login_attempts_total{outcome="failure"} 0',
    'gatehouse_login_attempts_total{outcome="throttled"} 0',
    'gatehouse_refreshes_total 0',
    'gatehouse_refresh_reuse_detected_total 0',
    'gatehouse_throttled_requests_total{limiter="login_rate"} 0',
    'gatehouse_throttled_requests_total{limiter="refresh_rate"} 0',
    'gatehouse_throttled_requests_total{limiter="mail_rate"} 0',
    'gatehouse_throttled_requests_total{limiter="login_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="password_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="second_factor_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="email_code_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="other"} 0',
    'gatehouse_mail_deliveries_total{outcome="sent"} 0',
    'gatehouse_mail_deliveries_total{outcome="retried"} 0',
    'gatehouse_mail_deliveries_total{outcome="abandoned"} 0',
    'gatehouse_access_denied_total{reason="missing_role"} 0',
    'gatehouse_access_denied_total{reason="not_owner"} 0',
    'gatehouse_access_denied_total{reason="superuser_required"} 0',
    'gatehouse_access_denied_total{reason="session_required"} 0',
    'gatehouse_access_denied_total{reason="csrf_rejected"} 0',
    'gatehouse_access_denied_total{reason="registration_disabled"} 0',
    'gatehouse_access_denied_total{reason="mfa_required"} 0',
    'gatehouse_access_denied_total{reason="reauth_required"} 0',
    // users by password hash, counted in the database at the scrape (SPEC §18): none yet
    ...census({}),
    'gatehouse_revocation_index_size 0'
  ])
  t.match(res.body, /^# HELP gatehouse_login_attempts_total Sign-in attempts by outcome\n# TYPE gatehouse_login_attempts_total counter$/m)
  t.match(res.body, /^# TYPE gatehouse_password_hash_duration_seconds histogram$/m)
  t.match(res.body, /^process_cpu_user_seconds_total \d/m, 'default process metrics')
  t.match(res.body, /^nodejs_heap_size_used_bytes \d/m, 'default Node.js metrics')
})

t.test('login outcomes, refreshes, reuse, throttles, revocations and hashing are counted', async (t) => {
  const app = await build(t, { ...ENABLED, LOGIN_MAX_FAILURES: 1, REFRESH_RATE_LIMIT: '4/m', LOGIN_RATE_LIMIT: '3/m' })
  const user = await createUser(app)
  const { refresh_token: oldest } = await login(app, user)

  const bad = { method: 'POST' as const, url: '/auth/login', remoteAddress: '203.0.113.9', payload: { email: user.email, password: 'Wrong-Password-1' } }
  t.equal((await app.inject(bad)).statusCode, 401)
  t.equal((await app.inject(bad)).statusCode, 429, 'the failure throttle refuses the second attempt')

  const middle = (await refresh(app, oldest)).json() as { refresh_token: string }
  const latest = (await refresh(app, middle.refresh_token)).json() as { refresh_token: string }
  t.equal((await refresh(app, oldest)).statusCode, 401, 'a token two rotations old is theft')
  t.equal((await refresh(app, latest.refresh_token)).statusCode, 401, 'the session is revoked')
  t.equal((await refresh(app, latest.refresh_token)).statusCode, 429, 'the fifth refresh from one address is rate limited')

  const other = { method: 'POST' as const, url: '/api/auth/login', remoteAddress: '198.51.100.4', payload: { email: 'nobody@example.com', password: 'x' } }
  for (let i = 0; i < 2; i++) await app.inject({ ...other, payload: { ...other.payload, email: `nobody${i}@example.com` } })
  t.equal((await app.inject(other)).statusCode, 401)
  t.equal((await app.inject(other)).statusCode, 429, 'the fourth login from one address is rate limited')

  const res = await scrape(app)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], PROMETHEUS_TEXT)
  t.strictSame(serviceSamples(res.body), [
    'gatehouse_login_attempts_total{outcome="success"} 1',
    'gatehouse_login_attempts_total{outcome="failure"} 4',
    'gatehouse_login_attempts_total{outcome="throttled"} 1',
    'gatehouse_refreshes_total 2',
    'gatehouse_refresh_reuse_detected_total 1',
    'gatehouse_throttled_requests_total{limiter="login_rate"} 1',
    'gatehouse_throttled_requests_total{limiter="refresh_rate"} 1',
    'gatehouse_throttled_requests_total{limiter="mail_rate"} 0',
    'gatehouse_throttled_requests_total{limiter="login_failures"} 1',
    'gatehouse_throttled_requests_total{limiter="password_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="second_factor_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="email_code_failures"} 0',
    'gatehouse_throttled_requests_total{limiter="other"} 0',
    'gatehouse_mail_deliveries_total{outcome="sent"} 0',
    'gatehouse_mail_deliveries_total{outcome="retried"} 0',
    'gatehouse_mail_deliveries_total{outcome="abandoned"} 0',
    'gatehouse_access_denied_total{reason="missing_role"} 0',
    'gatehouse_access_denied_total{reason="not_owner"} 0',
    'gatehouse_access_denied_total{reason="superuser_required"} 0',
    'gatehouse_access_denied_total{reason="session_required"} 0',
    'gatehouse_access_denied_total{reason="csrf_rejected"} 0',
    'gatehouse_access_denied_total{reason="registration_disabled"} 0',
    'gatehouse_access_denied_total{reason="mfa_required"} 0',
    'gatehouse_access_denied_total{reason="reauth_required"} 0',
    'gatehouse_password_hash_duration_seconds_count{operation="hash"} 1',
    'gatehouse_password_hash_duration_seconds_count{operation="verify"} 5',
    ...census({ argon2id: 1 }),
    'gatehouse_revocation_index_size 1'
  ])
})

t.test('a wrong current password on change-password is throttled and counted as password_failures', async (t) => {
  const app = await build(t, { ...ENABLED, LOGIN_MAX_FAILURES: 1 })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const change = { method: 'POST' as const, url: '/api/auth/change-password', headers: authHeader(token), payload: { current_password: 'Wrong-Password-1', new_password: 'New-Password-2' } }
  t.equal((await app.inject(change)).statusCode, 400)
  t.equal((await app.inject(change)).statusCode, 429)

  const samples = serviceSamples((await scrape(app)).body)
  t.ok(samples.includes('gatehouse_throttled_requests_total{limiter="password_failures"} 1'))
  t.ok(samples.includes('gatehouse_login_attempts_total{outcome="throttled"} 0'), 'not a sign-in')
})

t.test('each app has its own registry: a second app starts from zero', async (t) => {
  const first = await build(t, ENABLED)
  const user = await createUser(first)
  await login(first, user)
  const second = await build(t, ENABLED)
  t.ok(serviceSamples((await scrape(first)).body).includes('gatehouse_login_attempts_total{outcome="success"} 1'))
  t.ok(serviceSamples((await scrape(second)).body).includes('gatehouse_login_attempts_total{outcome="success"} 0'))
})

t.test('GET /metrics is not part of the OpenAPI document', async (t) => {
  const app = await build(t, ENABLED)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.notOk('/metrics' in doc.paths)
  t.ok('/api/audit' in doc.paths, 'the audit listing is')
})
