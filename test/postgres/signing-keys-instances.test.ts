import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import { createServices } from '../../src/services.js'
import { authHeader, build, createUser, login, tempDir, type TestContext } from '../helper.js'
import { TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'

/*
 * Two instances on one PostgreSQL schema and one Redis: a key change made on one is known to the
 * other within a second, on the signing keys' own channel (src/keys/key-changes.ts), never
 * disguised as a revocation. Runs in the PostgreSQL pass only.
 */

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const CLI = { ip: 'cli' }
const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid

async function statusWithin (app: FastifyInstance, token: string, expected: number, ms: number): Promise<number> {
  const start = Date.now()
  for (;;) {
    const { statusCode } = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
    if (statusCode === expected || Date.now() - start > ms) return Date.now() - start
    await sleep(20)
  }
}

async function twoInstances (t: TestContext, prefix: string): Promise<[FastifyInstance, FastifyInstance]> {
  const settings = { DATA_DIR: tempDir(t), JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix }
  return [await build(t, settings), await build(t, settings)]
}

async function subscriber (t: TestContext, ...channels: string[]): Promise<Redis> {
  const redis = new Redis(TEST_REDIS_URL)
  t.teardown(() => { redis.disconnect() })
  await redis.subscribe(...channels)
  return redis
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

t.test('a rotation and a revocation travel on the signing-keys channel, never as revocations, and the other instance applies each within a second', async (t) => {
  const prefix = uniquePrefix(t)
  const heard: Array<[string, unknown]> = []
  const listener = await subscriber(t, `${prefix}signing-keys`, `${prefix}revocations`)
  listener.on('message', (channel: string, text: string) => { heard.push([channel, JSON.parse(text)]) })
  const [a, b] = await twoInstances(t, prefix)
  t.equal(a.store.kind, 'postgres')
  const user = await createUser(a)
  const { access_token: token } = await login(a, user)
  const first = kidOf(token)
  t.equal((await b.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })).statusCode, 200, 'control: b takes a\'s token (and caches it)')

  // the standby (a next key that signs only once promoted) was created at the first start
  const standby = (await a.services.keys.list()).find((k) => k.kid !== first && k.state === 'next')?.kid
  const next = await a.services.keys.rotate(CLI)
  const published = async () => (await b.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid)
  const start = Date.now()
  while (!(await published()).includes(next.kid) && Date.now() - start < 2000) await sleep(20)
  t.ok(Date.now() - start < 1000, `b publishes the new key within a second (${Date.now() - start} ms)`)

  await a.services.keys.revoke(first, CLI)
  const elapsed = await statusWithin(b, token, 401, 3000)
  t.ok(elapsed < 1000, `b refuses the revoked key's token within a second (${elapsed} ms)`)

  t.same(heard, [
    [`${prefix}signing-keys`, { kid: first, change: 'created' }],
    [`${prefix}signing-keys`, { kid: standby, change: 'created' }],
    [`${prefix}signing-keys`, { kid: next.kid, change: 'created' }],
    [`${prefix}signing-keys`, { kid: first, change: 'revoked' }]
  ], 'the first key, the standby, the rotation and the revocation, each once, on the keys\' channel only')
  t.same(await a.store.revocations.listAfter(0), [], 'no key change is stored as a revocation')
})

t.test('a key revoked by a command (the CLI\'s services) is published on the channel when it closes, and the running instance refuses its tokens within a second', async (t) => {
  const prefix = uniquePrefix(t)
  const heard: Array<[string, unknown]> = []
  const [app] = await twoInstances(t, prefix)
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const kid = kidOf(token)
  t.equal((await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })).statusCode, 200, 'control: the token works')
  const listener = await subscriber(t, `${prefix}signing-keys`)
  listener.on('message', (channel: string, text: string) => { heard.push([channel, JSON.parse(text)]) })

  const command = await createServices({ config: app.config, store: app.store, log: { info () {}, warn () {}, error () {} }, role: 'command' })
  await command.start()
  await command.keys.revoke(kid, CLI)
  await sleep(300)
  t.same(heard, [], 'a command publishes nothing before it closes')
  await command.close()
  const elapsed = await statusWithin(app, token, 401, 3000)
  t.ok(elapsed < 1000, `the instance refuses the key's token within a second (${elapsed} ms)`)
  t.same(heard, [[`${prefix}signing-keys`, { kid, change: 'revoked' }]])
})
