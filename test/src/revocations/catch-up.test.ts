// Proves src/revocations/revocation-sync.ts.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, tempDir } from '../../helper.js'

/*
 * Instances sharing a database without Redis learn each other's revocations by reading the
 * revocations table every REVOCATION_POLL_MS. Which rows are new is decided by the database's
 * own sequence, never by comparing the clocks of the instances, which may disagree.
 */

const REVOKED = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }
const SKEW_MS = 10_000
const GIVE_UP_MS = 5000

/**
 * Resolves once `app` has finished `count` catch-up reads that started after this call (or
 * after GIVE_UP_MS, so a poll that never learns fails the assertions that follow instead of
 * hanging). The timer also keeps the process alive: the poll's own timer never does.
 */
async function readsAfterNow (t: Test, app: FastifyInstance, count: number): Promise<void> {
  const repository = app.store.revocations
  const read = repository.listAfter.bind(repository)
  let done = 0
  let finished = (): void => {}
  const capture = t.capture(repository, 'listAfter', async (...args: Parameters<typeof read>) => {
    const rows = await read(...args)
    if (++done === count) finished()
    return rows
  })
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, GIVE_UP_MS)
    finished = () => { clearTimeout(timer); resolve() }
  })
  capture.restore()
}

async function me (app: FastifyInstance, token: string) {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
}

/** Two instances on one database (one SQLite file, or one PostgreSQL schema), no Redis. */
async function instances (t: Test, clocks: { a: () => number, b: () => number }) {
  const values = { DATA_DIR: tempDir(t), REVOCATION_POLL_MS: 50 }
  const a = await build(t, values, { clock: clocks.a })
  const b = await build(t, values, { clock: clocks.b })
  return { a, b }
}

for (const [name, skew] of [[`${SKEW_MS / 1000} s ahead`, SKEW_MS], ['in step (the control)', 0]] as const) {
  t.test(`an instance whose clock is ${name} learns a revocation made on another at its next poll`, async (t) => {
    const { a: ahead, b: other } = await instances(t, { a: () => Date.now() + skew, b: Date.now })
    const user = await createUser(other)
    const { access_token: token } = await login(other, user)
    t.equal((await me(ahead, token)).statusCode, 200, 'accepted before the logout')

    const logout = await other.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(token) })
    t.equal(logout.statusCode, 204)
    // two whole reads: the first may have started before the logout committed
    await readsAfterNow(t, ahead, 2)
    const res = await me(ahead, token)
    t.equal(res.statusCode, 401)
    t.same(res.json(), REVOKED)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token has been revoked"')
  })
}
