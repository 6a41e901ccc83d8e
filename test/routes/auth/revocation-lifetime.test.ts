// Proves src/revocations/revocation-index.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, buildFrom, createUser, login, testConfig, type Tokens } from '../../helper.js'

const tokenRevoked = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }

/** Sleeps until `ms` (epoch) has passed: at most the couple of seconds a 1 s TTL's revocation lasted. */
async function until (ms: number): Promise<void> {
  while (Date.now() <= ms) await sleep(Math.max(1, ms + 1 - Date.now()))
}

/**
 * A token issued under a 10-minute ACCESS_TOKEN_TTL; the server restarted with 1 s, where
 * `revoke` ends its session; then a restart again once the 1 s TTL's revocation (1 s + the 1 s
 * margin) would be over: the old token, still within its own exp, must be refused there.
 */
async function afterLoweredTtl (t: Test, revoke: (app: FastifyInstance, old: Tokens) => Promise<void>) {
  const long = testConfig(t, { ACCESS_TOKEN_TTL: '10m' })
  const before = await buildFrom(t, long)
  const old = await login(before, await createUser(before))
  await before.close()

  const short = testConfig(t, { DATA_DIR: long.dataDir, ACCESS_TOKEN_TTL: '1s' })
  const during = await buildFrom(t, short)
  await revoke(during, old)
  const revokedAt = Date.now()
  await during.close()

  await until(revokedAt + 2000)
  const after = await buildFrom(t, short)
  const res = await after.inject({ method: 'GET', url: '/auth/me', headers: authHeader(old.access_token) })
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), tokenRevoked)
}

t.test('a token issued under a longer ACCESS_TOKEN_TTL stays revoked after a restart with a shorter one', async (t) => {
  await afterLoweredTtl(t, async (app, old) => {
    const out = await app.inject({ method: 'POST', url: '/auth/logout', headers: authHeader(old.access_token) })
    t.equal(out.statusCode, 204)
  })
})

t.test('a refresh under a shorter ACCESS_TOKEN_TTL does not shorten the revocation of an older, longer-lived token', async (t) => {
  await afterLoweredTtl(t, async (app, old) => {
    const rotated = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: old.refresh_token } })
    t.equal(rotated.statusCode, 200)
    const { refresh_token: current } = rotated.json() as Tokens
    const out = await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: current } })
    t.equal(out.statusCode, 204)
  })
})
