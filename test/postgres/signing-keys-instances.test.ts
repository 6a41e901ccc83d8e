import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login, tempDir } from '../helper.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'

/*
 * Two instances on one PostgreSQL schema and one Redis: a key change made on one is known to the
 * other within a second, through the revocation broadcast. Runs in the PostgreSQL pass only.
 */

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid

async function statusWithin (app: FastifyInstance, token: string, expected: number, ms: number): Promise<number> {
  const start = Date.now()
  for (;;) {
    const { statusCode } = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
    if (statusCode === expected || Date.now() - start > ms) return Date.now() - start
    await sleep(20)
  }
}

t.test('a key revoked on one instance is refused by the other within one second; a rotation is published there too', async (t) => {
  const dir = tempDir(t)
  const settings = { DATA_DIR: dir, JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: uniquePrefix(t) }
  const a = await build(t, settings)
  const b = await build(t, settings)
  t.equal(a.store.kind, 'postgres')
  const user = await createUser(a)
  const { access_token: token } = await login(a, user)
  t.equal((await b.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })).statusCode, 200, 'control: b takes a\'s token (and caches it)')

  const [, standby] = await a.services.keys.list()
  const next = await a.services.keys.rotate({ ip: 'cli' })
  const published = async () => (await b.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid)
  const start = Date.now()
  while (!(await published()).includes(next.kid) && Date.now() - start < 2000) await sleep(20)
  t.ok(Date.now() - start < 1000, `b publishes the new key within a second (${Date.now() - start} ms)`)

  await a.services.keys.revoke(kidOf(token), { ip: 'cli' })
  const elapsed = await statusWithin(b, token, 401, 3000)
  t.ok(elapsed < 1000, `b refuses the revoked key's token within a second (${elapsed} ms)`)
  const res = await b.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
  t.same(res.json(), { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' })

  // the next key published longest (the standby, older than the rotation's) was promoted at once: b verifies what a signs with it
  const { access_token: fresh } = await login(a, user)
  t.equal(kidOf(fresh), standby?.kid)
  t.ok(await statusWithin(b, fresh, 200, 2000) < 1000, 'b verifies the promoted key')
})
