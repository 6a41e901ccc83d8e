import { randomBytes } from 'node:crypto'
import t from 'tap'
import { ClientSecrets } from '../../../src/oidc/client-secrets.js'

/* Client secrets (src/oidc/client-secrets.ts): 256 random bits, kept as a keyed hash beside its data key's id. */

const key = (id: string) => ({ id, key: randomBytes(32) })
const K1 = key('k1')
const K2 = key('k2')

t.test('a secret is 256 random bits in base64url, never the same twice', async (t) => {
  const secrets = new ClientSecrets([K1])
  const made = new Set(Array.from({ length: 50 }, () => secrets.generate()))
  t.equal(made.size, 50)
  for (const secret of made) {
    t.match(secret, /^[A-Za-z0-9_-]{43}$/)
    t.equal(Buffer.from(secret, 'base64url').length, 32)
  }
})

t.test('the hash is an HMAC under the first data key, its id beside it; the right secret matches, any other does not', async (t) => {
  const secrets = new ClientSecrets([K1, K2])
  const secret = secrets.generate()
  const stored = secrets.hash(secret)
  t.equal(stored.keyId, 'k1')
  t.match(stored.hash, /^[A-Za-z0-9_-]{43}$/)
  t.not(stored.hash, secret)
  t.ok(secrets.matches(secret, stored))
  t.notOk(secrets.matches(`${secret}x`, stored), 'one character more')
  t.notOk(secrets.matches(secret.slice(0, -1), stored), 'one character less')
  t.notOk(secrets.matches('', stored), 'empty')
  t.notOk(secrets.matches(secret, { hash: `${stored.hash.startsWith('A') ? 'B' : 'A'}${stored.hash.slice(1)}`, keyId: 'k1' }), 'a changed hash')
  t.notOk(secrets.matches(secret, undefined), 'no stored secret (unknown or public client)')
  t.notOk(secrets.matches('x'.repeat(43), undefined), 'no stored secret, whatever is presented')
  t.not(new ClientSecrets([K2]).hash(secret).hash, stored.hash, 'another key, another hash: the key is in it')
})

t.test('DATA_ENCRYPTION_KEYS rotation: a secret made under k1 still matches once k2 is first; without k1 it fails', async (t) => {
  const secret = new ClientSecrets([K1]).generate()
  const stored = new ClientSecrets([K1]).hash(secret)
  const rotated = new ClientSecrets([K2, K1])
  t.ok(rotated.matches(secret, stored), 'k1 still listed')
  t.equal(rotated.hash(secret).keyId, 'k2', 'new hashes under the new first key')
  t.notOk(new ClientSecrets([K2]).matches(secret, stored), 'k1 gone: no match')
  t.notOk(new ClientSecrets([K2]).matches(secret, { ...stored, keyId: 'k2' }), 'relabelling the row does not help')
})

t.test('no data key, no client secrets', async (t) => {
  t.throws(() => new ClientSecrets([]), /need a data encryption key/)
})
