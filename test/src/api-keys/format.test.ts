import { crc32 } from 'node:zlib'
import t from 'tap'
import { base62Checksum, generateKey, KEY_LENGTH, keyIdOf, looksLikeKey } from '../../../src/api-keys/format.js'

/* The key format (src/api-keys/format.ts, docs/api-keys.md#the-format), as functions of their arguments. */

const SHAPE = /^gh_[0-9a-z]{12}_[0-9A-Za-z]{38}$/

t.test('generated keys have the shape, their id, and the CRC32 of the rest in base62', async (t) => {
  const seen = new Set<string>()
  for (let i = 0; i < 2000; i++) {
    const { id, key } = generateKey()
    t.match(key, SHAPE)
    t.equal(key.length, KEY_LENGTH)
    t.equal(keyIdOf(key), id)
    seen.add(id)
  }
  t.equal(seen.size, 2000, 'ids do not repeat')
})

t.test('the checksum: CRC32 (zlib) in base62, most significant first, left-padded with 0 to 6', async (t) => {
  t.equal(base62Checksum(''), '000000', 'crc32 of nothing is 0')
  // crc32('a') = 0xe8b7be43 = 3904355907 = 4·62^5 + 16·62^4 + 14·62^3 + 17·62^2 + 20·62 + 23
  t.equal(crc32('a'), 3904355907)
  t.equal(base62Checksum('a'), '4GEHKN')
  t.equal(base62Checksum('gh_'), (() => {
    let v = crc32('gh_')
    let s = ''
    for (let i = 0; i < 6; i++) { s = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[v % 62] + s; v = Math.floor(v / 62) }
    return s
  })())
})

t.test('keyIdOf refuses every other shape and a wrong checksum', async (t) => {
  const { key } = generateKey()
  const flip = (at: number, c: string) => key.slice(0, at) + c + key.slice(at + 1)
  const cases = {
    'one character short': key.slice(0, -1),
    'one character long': key + 'a',
    'another prefix': 'gH_' + key.slice(3),
    'an upper-case id': flip(3, 'A'),
    'no separator': flip(15, '-'),
    'a non-ASCII secret': flip(20, 'é'),
    'a changed random character': flip(20, key[20] === 'a' ? 'b' : 'a'),
    'a changed checksum': flip(KEY_LENGTH - 1, key.at(-1) === '0' ? '1' : '0'),
    'a JWT': 'eyJhbGciOiJIUzI1NiJ9.e30.abc'
  }
  for (const [what, candidate] of Object.entries(cases)) t.equal(keyIdOf(candidate), undefined, what)
  t.ok(looksLikeKey(key))
  t.notOk(looksLikeKey('eyJhbGciOiJIUzI1NiJ9'))
})
