import { createHash, randomBytes } from 'node:crypto'
import t from 'tap'
import { FlowSecrets, s256 } from '../../../src/oidc/flow-secrets.js'

/* src/oidc/flow-secrets.ts: interaction ids and codes as keyed hashes under DATA_ENCRYPTION_KEYS, found again after a key rotation. */

const key = (id: string) => ({ id, key: randomBytes(32) })

t.test('a secret is 256 random bits; only its keyed hash is kept, under the first key, with the key id', async (t) => {
  const k1 = key('k1')
  const secrets = new FlowSecrets([k1])
  const code = secrets.generate()
  t.match(code, /^[A-Za-z0-9_-]{43}$/)
  t.not(secrets.generate(), code)
  const { hash, keyId } = secrets.hash('code', code)
  t.equal(keyId, 'k1')
  t.not(hash, code)
  t.strictSame(secrets.candidates('code', code), [hash])
  // a purpose of its own: the same value as an interaction id hashes differently
  t.not(secrets.hash('interaction', code).hash, hash)
  // another key, another hash: a copy of the table is no use without the key
  t.not(new FlowSecrets([key('k1')]).hash('code', code).hash, hash)
})

t.test('after a rotation (a new first key) a stored hash is still among the candidates', async (t) => {
  const k1 = key('k1')
  const code = new FlowSecrets([k1]).generate()
  const stored = new FlowSecrets([k1]).hash('code', code).hash
  const rotated = new FlowSecrets([key('k2'), k1])
  t.equal(rotated.hash('code', code).keyId, 'k2')
  t.ok(rotated.candidates('code', code).includes(stored))
  // negative control: without the old key, it is not
  t.notOk(new FlowSecrets([key('k2')]).candidates('code', code).includes(stored))
  // a value that cannot be one of ours is not even hashed
  t.strictSame(rotated.candidates('code', 'short'), [])
  t.throws(() => new FlowSecrets([]))
})

t.test('s256 is RFC 7636 §4.6 (its appendix B example)', async (t) => {
  t.equal(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
  t.equal(s256('abc'), createHash('sha256').update('abc').digest('base64url'))
})
