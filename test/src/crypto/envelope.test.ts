import { randomBytes } from 'node:crypto'
import t from 'tap'
import { ConfigError } from '../../../src/errors.js'
import { Envelope, EnvelopeError, parseDataKeys } from '../../../src/crypto/envelope.js'

const keyA = randomBytes(32).toString('base64')
const keyB = randomBytes(32).toString('base64')

t.test('the first key seals, every key opens, and the key id travels with the ciphertext', async (t) => {
  const old = new Envelope(parseDataKeys(`a:${keyA}`))
  const sealedByA = old.seal('private key bytes', 'kid-1')
  t.match(sealedByA, /^a\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
  t.not(old.seal('private key bytes', 'kid-1'), sealedByA, 'a fresh IV each time')

  const rotated = new Envelope(parseDataKeys(`b:${keyB},a:${keyA}`))
  t.equal(rotated.open(sealedByA, 'kid-1').toString(), 'private key bytes', 'the old key still opens')
  const sealedByB = rotated.seal('another', 'kid-2')
  t.ok(sealedByB.startsWith('b.'), 'the first key seals')
  t.throws(() => old.open(sealedByB, 'kid-2'), new EnvelopeError('unknown_key', 'b'))
})

t.test('a ciphertext opens only under its context, its key and unaltered', async (t) => {
  const envelope = new Envelope(parseDataKeys(`a:${keyA}`))
  const sealed = envelope.seal('secret', 'kid-1')
  t.throws(() => envelope.open(sealed, 'kid-2'), new EnvelopeError('undecryptable', 'a'), 'moved to another row')
  t.throws(() => new Envelope(parseDataKeys(`a:${keyB}`)).open(sealed, 'kid-1'), new EnvelopeError('undecryptable', 'a'), 'same id, other key')
  const [id, iv, ciphertext = '', tag] = sealed.split('.')
  const flipped = (ciphertext[0] === 'A' ? 'B' : 'A') + ciphertext.slice(1)
  t.throws(() => envelope.open([id, iv, flipped, tag].join('.'), 'kid-1'), new EnvelopeError('undecryptable', 'a'), 'tampered')
  t.equal(envelope.open(sealed, 'kid-1').toString(), 'secret', 'control: the untouched value opens')
})

t.test('DATA_ENCRYPTION_KEYS entries are refused with the setting named', async (t) => {
  t.throws(() => parseDataKeys('nocolon'), new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS entries are written id:base64key, ids of letters, digits, _ or - (at most 32)'))
  t.throws(() => parseDataKeys(`bad id:${keyA}`), /DATA_ENCRYPTION_KEYS entries are written/)
  t.throws(() => parseDataKeys(`a:${randomBytes(16).toString('base64')}`), new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS key a must be 32 bytes in base64 (openssl rand -base64 32)'))
  t.throws(() => parseDataKeys('a:not*base64*at*all*padding*here*xx'), /key a must be 32 bytes/)
  t.throws(() => parseDataKeys(`a:${keyA},a:${keyB}`), new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS names key a twice'))
  t.same(parseDataKeys(` a:${keyA} , b:${keyB}`).map((k) => k.id), ['a', 'b'])
})
