// Proves src/limits/throttle.ts.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'
import { TEST_REDIS_URL, uniquePrefix } from '../../redis/helper.js'

/*
 * The failure throttle counts an attempt before the password is hashed: guesses sent all at once
 * from one address get no more than LOGIN_MAX_FAILURES hashes between them, whichever store
 * (this instance's memory, or Redis) holds the counters.
 */

const RATE_LIMITED = { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' }
const BAD_LOGIN = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }
const BAD_PASSWORD = { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' }
const MAX = 5
const ATTEMPTS = 20

/** How many responses had each status, and whether each body is the one that status must carry. */
function tally (t: Test, responses: Array<{ statusCode: number, json: () => unknown, headers: Record<string, unknown> }>, failed: { status: number, body: object }) {
  const counts: Record<number, number> = {}
  for (const res of responses) {
    counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
    if (res.statusCode === 429) {
      t.same(res.json(), RATE_LIMITED)
      t.ok(Number(res.headers['retry-after']) >= 1, 'a 429 says when to come back')
    } else {
      t.same(res.json(), failed.body)
    }
  }
  t.same(counts, { [failed.status]: MAX, 429: ATTEMPTS - MAX }, `exactly ${MAX} guesses were checked, the rest refused`)
}

const stores: Array<[string, (t: Test) => Record<string, unknown>]> = [
  ['in memory', () => ({})],
  ['in Redis', (t) => ({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t) })]
]

for (const [name, values] of stores) {
  t.test(`${ATTEMPTS} wrong passwords at once for one email from one address: ${MAX} get 401, the rest 429 (counters ${name})`, async (t) => {
    const app = await build(t, { LOGIN_MAX_FAILURES: MAX, ...values(t) })
    const user = await createUser(app)
    const responses = await Promise.all(Array.from({ length: ATTEMPTS }, async () => await app.inject({
      method: 'POST', url: '/auth/login', remoteAddress: '203.0.113.20', payload: { email: user.email, password: 'wrong-password' }
    })))
    tally(t, responses, { status: 401, body: BAD_LOGIN })
    const locked = await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '203.0.113.20', payload: { email: user.email, password: user.password } })
    t.equal(locked.statusCode, 429, 'the pair stays locked, even for the right password')
  })

  t.test(`${ATTEMPTS} wrong current passwords at once on change-password: ${MAX} get 400, the rest 429 (counters ${name})`, async (t) => {
    const app = await build(t, { LOGIN_MAX_FAILURES: MAX, ...values(t) })
    const user = await createUser(app)
    const { access_token: token } = await login(app, user)
    const responses = await Promise.all(Array.from({ length: ATTEMPTS }, async () => await app.inject({
      method: 'POST', url: '/api/auth/change-password', headers: authHeader(token), payload: { current_password: 'wrong-password', new_password: 'Brand-new-pass1' }
    })))
    tally(t, responses, { status: 400, body: BAD_PASSWORD })
  })

  t.test(`concurrent right passwords all sign in and leave no failure counted (counters ${name})`, async (t) => {
    const app: FastifyInstance = await build(t, { LOGIN_MAX_FAILURES: 2, ...values(t) })
    const user = await createUser(app)
    const attempt = (password: string) => app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '203.0.113.21', payload: { email: user.email, password } })
    const ok = await Promise.all(Array.from({ length: 2 }, async () => await attempt(user.password)))
    t.same(ok.map((r) => r.statusCode), [200, 200], 'an attempt in flight that succeeds holds no slot afterwards')
    t.equal((await attempt('wrong-password')).statusCode, 401)
    t.equal((await attempt('wrong-password')).statusCode, 401, 'the full budget of failures is still there')
    t.equal((await attempt(user.password)).statusCode, 429)
  })
}
