import t from 'tap'
import { build, createUser } from '../../helper.js'

/*
 * The API key repository (src/db/api-keys.ts): last_used_at written at most once a minute whichever
 * instance writes (the condition is in the update), and a revocation recorded once, in the
 * revocations table the instances read by sequence.
 */

const iso = (ms: number) => new Date(ms).toISOString()

t.test('touch writes last_used_at only when the last write is older than the interval', async (t) => {
  const app = await build(t, { ENABLE_API_KEYS: true })
  const user = await createUser(app)
  const now = Date.now()
  await app.store.apiKeys.create({ id: 'abcdefghijkl', userId: user.id, name: 'k', roles: [], secretHash: 'x', hashKeyId: 'k1', createdAt: iso(now), expiresAt: iso(now + 86_400_000) })
  const lastUsed = async () => (await app.store.apiKeys.findOwned('abcdefghijkl'))?.lastUsedAt
  await app.store.apiKeys.touch('abcdefghijkl', iso(now), iso(now - 60_000))
  t.equal(await lastUsed(), iso(now), 'the first use is written')
  // a second instance, 30 s later: its condition (not written since a minute before) fails
  await app.store.apiKeys.touch('abcdefghijkl', iso(now + 30_000), iso(now - 30_000))
  t.equal(await lastUsed(), iso(now), 'not again within the minute')
  await app.store.apiKeys.touch('abcdefghijkl', iso(now + 61_000), iso(now + 1000))
  t.equal(await lastUsed(), iso(now + 61_000), 'a minute later, again')
})

t.test('revoke marks the key and records it once in revocations, until the key would have expired', async (t) => {
  const app = await build(t, { ENABLE_API_KEYS: true })
  const user = await createUser(app)
  const now = Date.now()
  const expiresAt = iso(now + 86_400_000)
  await app.store.apiKeys.create({ id: 'mnopqrstuvwx', userId: user.id, name: 'k', roles: ['user'], secretHash: 'x', hashKeyId: 'k1', createdAt: iso(now), expiresAt })
  const [first, second] = await Promise.all([
    app.store.apiKeys.revoke({ keyId: 'mnopqrstuvwx' }, 'test', iso(now), 1000),
    app.store.apiKeys.revoke({ keyId: 'mnopqrstuvwx' }, 'test', iso(now), 1000)
  ])
  t.equal((first?.length ?? 0) + (second?.length ?? 0), 1, 'one of two concurrent revocations ends the key')
  t.same([...(first ?? []), ...(second ?? [])], [{ keyId: 'mnopqrstuvwx', userId: user.id, revocationExpiresAt: iso(Date.parse(expiresAt) + 1000) }])
  const live = await app.store.revocations.listLive(iso(now))
  t.same(live.filter((r) => r.sessionId === 'mnopqrstuvwx').map((r) => r.reason), ['test'])
  t.equal((await app.store.apiKeys.findOwned('mnopqrstuvwx'))?.revokedAt, iso(now))
})
