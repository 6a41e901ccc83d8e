import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { PASSWORD, tempDir, TEST_SECRET } from '../helper.js'
import { PrivateRedis, TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'
import { freshSchema, startInstance, type Instance } from './instances.js'
import { BAD_LOGIN, RATE_LIMITED, REVOKED } from '../patterns.js'

/*
 * Several real server processes on one PostgreSQL schema
 * and one Redis behave as one service — sessions, revocations and limits span instances, and
 * losing Redis costs sharing, never answers.
 */

const REUSED = { error: 'Unauthorized', message: 'The refresh token was already used; the session has been revoked', code: 'refresh_token_reused' }
const WWW_REVOKED = `Bearer realm="gatehouse", error="invalid_token", error_description="${REVOKED.message}"`

const REDIS_LOST = 'Redis is unreachable: limits are counted per instance until it returns'
const REDIS_BACK = 'Redis is reachable again: limits are shared'
const BROADCAST_BACK = 'revocation broadcast restored'

/** Two instances on one fresh schema and one Redis; B starts once A has migrated the schema. */
async function startPair (t: Test, redisUrl: string): Promise<[Instance, Instance]> {
  const env = {
    JWT_SECRET: TEST_SECRET,
    DATA_DIR: tempDir(t),
    DATABASE_URL: await freshSchema(t),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: uniquePrefix(t),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ENABLE_REGISTER: 'true',
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1',
    REFRESH_REUSE_INTERVAL: '1s',
    LOGIN_MAX_FAILURES: '3'
  }
  const a = await startInstance(t, 'A', env)
  const b = await startInstance(t, 'B', env)
  return [a, b]
}

interface TokenBody { access_token: string, refresh_token: string, user: Record<string, unknown> }

let users = 0

async function register (t: Test, instance: Instance): Promise<{ email: string, user: Record<string, unknown> }> {
  const email = `multi${++users}-${process.pid}@example.com`
  const res = await instance.call('POST', '/auth/register', { body: { email, password: PASSWORD, name: 'Multi User' } })
  t.equal(res.status, 201, `registered on ${instance.name}`)
  return { email, user: (res.body as TokenBody).user }
}

async function login (t: Test, instance: Instance, email: string): Promise<TokenBody> {
  const res = await instance.call('POST', '/auth/login', { body: { email, password: PASSWORD } })
  t.equal(res.status, 200, `signed in on ${instance.name}`)
  return res.body as TokenBody
}

/** Asserts `instance` refuses the access token as revoked within a second of now. */
async function refusedWithinASecond (t: Test, instance: Instance, token: string): Promise<void> {
  const started = Date.now()
  for (;;) {
    const res = await instance.call('GET', '/auth/me', { token })
    if (res.status === 401) {
      t.same(res.body, REVOKED, `${instance.name} refuses the revoked token`)
      t.equal(res.headers.get('www-authenticate'), WWW_REVOKED)
      t.ok(Date.now() - started < 1000, `${instance.name} refused it after ${Date.now() - started} ms`)
      return
    }
    t.equal(res.status, 200, 'accepted until the revocation arrives')
    if (Date.now() - started >= 1000) {
      t.fail(`${instance.name} still accepts the token after a second`)
      return
    }
    await sleep(20)
  }
}

/** Waits until every instance has logged `msg` (a reconnect is retried at most a second apart). */
async function logged (instances: Instance[], msg: string): Promise<void> {
  for (let waited = 0; !instances.every((i) => i.logs().some((r) => r.msg === msg)); waited += 50) {
    if (waited > 15_000) throw new Error(`not every instance logged "${msg}"`)
    await sleep(50)
  }
}

async function failedLogin (t: Test, instance: Instance, email: string): Promise<void> {
  const res = await instance.call('POST', '/auth/login', { body: { email, password: 'Wrong-Password-1' } })
  t.equal(res.status, 401, `a failed sign-in on ${instance.name}`)
  t.same(res.body, BAD_LOGIN)
}

async function lockedOut (t: Test, instance: Instance, email: string): Promise<void> {
  const res = await instance.call('POST', '/auth/login', { body: { email, password: PASSWORD } })
  t.equal(res.status, 429, `${instance.name} refuses even the right password`)
  t.same(res.body, RATE_LIMITED)
  t.ok(Number(res.headers.get('retry-after')) > 0, 'with Retry-After')
}

/** No instance logged an error (a 500 is logged at level 50). */
function noErrors (t: Test, instances: Instance[]): void {
  for (const instance of instances) t.same(instance.logs().filter((r) => r.level >= 50), [], `${instance.name} logged no error`)
}

t.test('two instances on one PostgreSQL schema and one Redis', async (t) => {
  const [a, b] = await startPair(t, TEST_REDIS_URL)

  t.test('sign in on A, refresh on B, sign out on A: B refuses the access token within a second', async (t) => {
    const { email, user } = await register(t, a)
    const first = await login(t, a, email)
    const refreshed = await b.call('POST', '/auth/refresh', { body: { refresh_token: first.refresh_token } })
    t.equal(refreshed.status, 200, `B rotates the refresh token A issued ${JSON.stringify(refreshed.body)}`)
    const second = refreshed.body as TokenBody
    t.not(second.refresh_token, first.refresh_token)
    const me = await b.call('GET', '/auth/me', { token: second.access_token })
    t.equal(me.status, 200)
    t.strictSame(me.body, user)

    const out = await a.call('POST', '/auth/logout', { token: second.access_token })
    t.equal(out.status, 204)
    await refusedWithinASecond(t, b, second.access_token)
    const again = await b.call('POST', '/auth/refresh', { body: { refresh_token: second.refresh_token } })
    t.equal(again.status, 401, 'nor does its refresh token refresh on B')
    t.same(again.body, REVOKED)
  })

  t.test('a refresh token reused on B after the grace interval revokes the session on A too', async (t) => {
    const { email } = await register(t, a)
    const first = await login(t, a, email)
    const rotated = await a.call('POST', '/auth/refresh', { body: { refresh_token: first.refresh_token } })
    t.equal(rotated.status, 200)
    const current = rotated.body as TokenBody
    await sleep(1500)
    const stolen = await b.call('POST', '/auth/refresh', { body: { refresh_token: first.refresh_token } })
    t.equal(stolen.status, 401)
    t.same(stolen.body, REUSED)
    await refusedWithinASecond(t, a, current.access_token)
    const owner = await a.call('POST', '/auth/refresh', { body: { refresh_token: current.refresh_token } })
    t.equal(owner.status, 401, 'the chain the thief raced is over on A as well')
    t.same(owner.body, REVOKED)
  })

  t.test('the login throttle counts the failed attempts made on both instances', async (t) => {
    const { email } = await register(t, b)
    await failedLogin(t, a, email)
    await failedLogin(t, b, email)
    await failedLogin(t, a, email)
    await lockedOut(t, b, email)
    await lockedOut(t, a, email)
  })

  t.test('neither instance logged an error meanwhile', async (t) => { noErrors(t, [a, b]) })
})

t.test('with Redis stopped both instances keep answering, and share again once it is back', async (t) => {
  const redis = await PrivateRedis.start(t)
  const [a, b] = await startPair(t, redis.url)
  const { email, user } = await register(t, a)
  await failedLogin(t, a, email)
  await failedLogin(t, b, email)

  await redis.stop()
  await logged([a, b], REDIS_LOST)
  for (const instance of [a, b]) {
    const health = await instance.call('GET', '/health')
    t.equal(health.status, 200)
    t.same(health.body, { status: 'ok' })
    const ready = await instance.call('GET', '/ready')
    t.equal(ready.status, 200, 'the database still answers, so the instance is ready')
  }
  const session = await login(t, a, email)
  const me = await b.call('GET', '/auth/me', { token: session.access_token })
  t.equal(me.status, 200, 'B accepts A\'s session without Redis')
  t.strictSame(me.body, user)
  await failedLogin(t, b, email)
  const out = await a.call('POST', '/auth/logout', { token: session.access_token })
  t.equal(out.status, 204)
  await refusedWithinASecond(t, b, session.access_token)

  await redis.start()
  await logged([a, b], REDIS_BACK)
  await logged([a, b], BROADCAST_BACK)
  // the restarted Redis kept nothing, so these three start a fresh shared window
  await failedLogin(t, a, email)
  await failedLogin(t, b, email)
  await failedLogin(t, a, email)
  await lockedOut(t, b, email)

  const other = await register(t, b)
  const pushed = await login(t, b, other.email)
  t.equal((await b.call('POST', '/auth/logout', { token: pushed.access_token })).status, 204)
  await refusedWithinASecond(t, a, pushed.access_token)

  for (const instance of [a, b]) {
    t.equal(instance.logs().filter((r) => r.msg === REDIS_LOST).length, 1, `${instance.name} warned once about the outage`)
  }
  noErrors(t, [a, b])
})
