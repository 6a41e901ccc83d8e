import { randomBytes } from 'node:crypto'
import t from 'tap'
import { generateKey } from '../../../src/api-keys/format.js'
import { ApiKeyVerifier, SWEEP_INTERVAL_MS } from '../../../src/api-keys/key-verifier.js'
import { KeyedHash } from '../../../src/crypto/keyed-hash.js'
import type { OwnedApiKey } from '../../../src/db/api-keys.js'
import type { Store } from '../../../src/db/store.js'
import { RevocationIndex } from '../../../src/revocations/revocation-index.js'

/*
 * What bounds the verifier's memory (src/api-keys/key-verifier.ts, docs/api-keys.md#choices-where-the-contract-is-silent):
 * ended keys are kept, and leave at the first sweep that finds them not presented since the one
 * before; a key gone with its owner is refused from its revocation alone, while the index holds it.
 * No database: the rows are an in-memory table, the clock is Date.now captured.
 */

const HASH = new KeyedHash(randomBytes(32), 'gatehouse api keys')
const DAY = 86_400_000

interface Table { rows: Map<string, OwnedApiKey>, reads: string[] }

function rowOf (key: { id: string, key: string }, nowMs: number, revoked = false): OwnedApiKey {
  return {
    id: key.id,
    userId: 'owner',
    ownerEmail: 'owner@example.com',
    name: key.id,
    roles: ['user'],
    secretHash: HASH.of(key.key),
    hashKeyId: 'k1',
    createdAt: new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + DAY).toISOString(),
    lastUsedAt: null,
    revokedAt: revoked ? new Date(nowMs).toISOString() : null
  }
}

function verifierOn (table: Table, index: RevocationIndex): ApiKeyVerifier {
  const apiKeys = {
    findOwned: async (id: string) => { table.reads.push(id); return table.rows.get(id) },
    touch: async () => {}
  }
  return new ApiKeyVerifier({ store: { apiKeys } as unknown as Store, index, hashers: new Map([['k1', HASH]]), issuer: 'gatehouse', log: { error () {} } })
}

/** The answer to a key: `ok`, or the error's code; `sync` when no read was waited for. */
async function answer (verifier: ApiKeyVerifier, key: string): Promise<string> {
  try {
    const claims = verifier.verify(key)
    if (!(claims instanceof Promise)) return 'ok (memory)'
    return await claims.then(() => 'ok (read)', (err: { code: string }) => `${err.code} (read)`)
  } catch (err) {
    return `${(err as { code: string }).code} (memory)`
  }
}

t.test('an ended key stays until a sweep finds it not presented since the previous one; live keys stay', async (t) => {
  let now = Date.parse('2026-11-27T03:00:00.000Z')
  t.capture(Date, 'now', () => now)
  const table: Table = { rows: new Map(), reads: [] }
  const [live, revoked, b, c, d] = [generateKey(), generateKey(), generateKey(), generateKey(), generateKey()] as const
  for (const key of [live, b, c, d]) table.rows.set(key.id, rowOf(key, now))
  table.rows.set(revoked.id, rowOf(revoked, now, true))
  const verifier = verifierOn(table, new RevocationIndex())
  const present = async (key: typeof live) => await answer(verifier, key.key)

  t.same([await present(live), await present(revoked)], ['ok (read)', 'TOKEN_REVOKED (read)'])
  t.same([await present(live), await present(revoked)], ['ok (memory)', 'TOKEN_REVOKED (memory)'], 'both held')
  now += SWEEP_INTERVAL_MS + 1
  t.equal(await present(b), 'ok (read)', 'a read, which sweeps: the revoked key was refused since the sweep before (the start)')
  now += SWEEP_INTERVAL_MS / 2
  t.equal(await present(revoked), 'TOKEN_REVOKED (memory)')
  now += SWEEP_INTERVAL_MS / 2 + 1
  t.equal(await present(c), 'ok (read)', 'the next sweep keeps it: refused since the previous one')
  t.equal(verifier.size, 4)
  now += SWEEP_INTERVAL_MS + 1
  t.equal(await present(d), 'ok (read)', 'the one after drops it: not presented since')
  t.equal(verifier.size, 4, 'the live keys stay, the revoked one is gone')
  table.reads.length = 0
  t.same([await present(revoked), await present(live)], ['TOKEN_REVOKED (read)', 'ok (memory)'], 'presented again, it is read once more')
  t.same(table.reads, [revoked.id])
})

t.test('a key whose row went with its owner is refused from its revocation without a read, while the index holds it', async (t) => {
  let now = Date.parse('2026-11-27T03:00:00.000Z')
  t.capture(Date, 'now', () => now)
  const table: Table = { rows: new Map(), reads: [] }
  const index = new RevocationIndex()
  const gone = generateKey()
  const other = generateKey()
  table.rows.set(other.id, rowOf(other, now))
  index.learn(gone.id, now + DAY)
  const verifier = verifierOn(table, index)
  t.equal(await answer(verifier, gone.key), 'TOKEN_REVOKED (read)', 'no row, a revocation: revoked, not unknown')
  t.equal(await answer(verifier, gone.key), 'TOKEN_REVOKED (memory)', 'then without a read')
  t.equal(verifier.size, 0, 'no entry is held for it: there is no row to hold')
  t.same(table.reads, [gone.id])
  // the index forgets the revocation once the key would have expired: so does the verifier
  now += DAY + 1
  index.prune(now)
  t.equal(await answer(verifier, other.key), 'TOKEN_EXPIRED (read)', 'a read, which sweeps')
  t.equal(await answer(verifier, gone.key), 'TOKEN_INVALID (read)', 'unknown now, as on an instance that never saw it')
})
