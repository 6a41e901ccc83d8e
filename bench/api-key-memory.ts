import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKey } from '../src/api-keys/format.js'
import { ApiKeyVerifier } from '../src/api-keys/key-verifier.js'
import { KeyedHash } from '../src/crypto/keyed-hash.js'
import { connect } from '../src/db/store.js'
import { RevocationIndex } from '../src/revocations/revocation-index.js'

/*
 * What live API keys cost in memory (docs/api-keys.md#speed): `count` keys (default 10,000) of 100
 * owners in a SQLite file, each then presented once to the verifier, which reads it from the database
 * and keeps it. The RSS and heap after a full GC, before and after, are reported; the database's own
 * page cache is warmed before the first measurement, so the difference is the verifier's index.
 * `npm run build:bench && node --expose-gc dist/bench/api-key-memory.js [count]`
 */

const count = Number(process.argv[2] ?? 10_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-key-memory-'))
const store = await connect(`sqlite:${join(dir, 'keys.db')}`)
await store.migrate()
const hash = new KeyedHash(randomBytes(32), 'gatehouse api keys')
const now = new Date().toISOString()
const later = new Date(Date.now() + 86_400_000).toISOString()
const owners = Array.from({ length: 100 }, () => randomUUID())
for (const [i, id] of owners.entries()) {
  await store.users.create({ id, email: `owner${i}@example.com`, name: 'Owner', age: null, passwordHash: '', roles: ['user', 'reports'], isSuperuser: false }, now)
}
const keys: string[] = []
await store.transaction(async (tx) => {
  for (let i = 0; i < count; i++) {
    const { id, key } = generateKey()
    keys.push(key)
    await tx.apiKeys.create({ id, userId: owners[i % owners.length] ?? '', name: `key ${i}`, roles: ['reports'], secretHash: hash.of(key), hashKeyId: 'k1', createdAt: now, expiresAt: later })
  }
})
// warm SQLite's page cache and the code paths, so the second measurement differs by the index alone
// and mark every key used a moment ago, so no last_used_at write (nor its page cache) falls into the measurement
for (const key of keys) await store.apiKeys.findOwned(key.slice(3, 15))
for (const key of keys) await store.apiKeys.touch(key.slice(3, 15), new Date().toISOString(), now)
const verifier = new ApiKeyVerifier({ store, index: new RevocationIndex(), hashers: new Map([['k1', hash]]), issuer: 'gatehouse', log: console })
const first = keys[0] ?? ''
await verifier.verify(first)
verifier.forget(first.slice(3, 15))

const measure = () => { gc(); gc(); return { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed } }
const before = measure()
for (const key of keys) await verifier.verify(key)
// each first use wrote last_used_at afterwards: let those writes finish
await new Promise((resolve) => setTimeout(resolve, 1000))
const after = measure()
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
process.stdout.write(`${verifier.size} keys held: RSS +${mb(after.rss - before.rss)} MB, heap +${mb(after.heap - before.heap)} MB ` +
  `(${Math.round((after.heap - before.heap) / verifier.size)} bytes of heap per key)\n`)
await store.close()
rmSync(dir, { recursive: true, force: true })
