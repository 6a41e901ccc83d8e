// Proves src/db/revocations.ts.
import t from 'tap'
import { build, createUser, login } from '../../helper.js'

/*
 * Instances find new revocations by the table's id, so an id must only ever grow: never reused,
 * even once the newest rows have been pruned (SQLite reuses a plain rowid then).
 */

t.test('revocation ids grow in the order of the revocations and are never reused after a prune', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const sessions = await Promise.all([0, 1, 2].map(async () => (await login(app, user)).response.json().access_token as string))
  const revoke = async (sessionId: string, now: string) => await app.store.sessions.revoke({ sessionId }, 'test', now, 1000)
  const claims = sessions.map((token) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { session_id: string })

  await revoke(claims[0]?.session_id ?? '', '2030-01-01T00:00:00.000Z')
  await revoke(claims[1]?.session_id ?? '', '2030-01-01T00:00:01.000Z')
  const first = await app.store.revocations.listAfter(0)
  t.same(first.map((r) => r.sessionId), [claims[0]?.session_id, claims[1]?.session_id], 'in the order they were made')
  const [a, b] = first.map((r) => r.id)
  t.ok(typeof a === 'number' && typeof b === 'number' && b > a, `ids are numbers, increasing (${a}, ${b})`)
  t.same(await app.store.revocations.listAfter(a ?? 0), [first[1]], 'listAfter reads only what follows the id')

  await app.store.revocations.deleteExpired('2031-01-01T00:00:00.000Z')
  t.same(await app.store.revocations.listAfter(0), [], 'every row pruned, the newest included')
  await revoke(claims[2]?.session_id ?? '', '2030-01-01T00:00:02.000Z')
  const [next] = await app.store.revocations.listAfter(0)
  t.ok((next?.id ?? 0) > (b ?? 0), `the next id (${next?.id}) follows the pruned ones, so no reader skips it`)
})
