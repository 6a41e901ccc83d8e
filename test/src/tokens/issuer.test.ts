import { createHmac } from 'node:crypto'
import t from 'tap'
import { TokenExpired, TokenInvalid } from '../../../src/errors.js'
import { createTokenCodec } from '../../../src/tokens/codec.js'
import { TokenIssuer } from '../../../src/tokens/issuer.js'
import { signInStrength, type Claims } from '../../../src/tokens/claims.js'
import { tempDir, TEST_SECRET } from '../../helper.js'
import { startServer } from '../../process/server-process.js'

const LIFETIMES = { issuer: 'gatehouse', accessTtl: 900, refreshTtl: 3600 }
const SUBJECT = { id: '6f1c1c8e-4a43-4d2b-9a57-0d7f1b1e2a10', email: 'ann@example.com', roles: ['user'], isSuperuser: false }
const SESSION = '0b7c6f0e-3b9f-4a43-8f1e-8e2f5d1c9a33'
const STRENGTH = signInStrength('pwd', 1_800_000_000)

/** An issuer as the services build it, without an app. */
function issuer (limits: { maxEntries?: number, maxBytes?: number } = {}): TokenIssuer {
  return new TokenIssuer(createTokenCodec(TEST_SECRET, 'gatehouse'), LIFETIMES, limits)
}

const nowSeconds = () => Math.floor(Date.now() / 1000)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A token of about `size` bytes shaped like ours, signed with a key that is not the service's. */
function forged (claims: Claims, size: number, i: number): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, jti: `forged-${i}`, pad: 'x'.repeat(size) })}`
  return `${input}.${createHmac('sha256', 'not-the-secret-but-32-bytes-long!!').update(input).digest('base64url')}`
}

t.test('a TokenIssuer built without an app signs a token that it verifies back to its claims', async (t) => {
  const tokens = issuer()
  const claims = tokens.claims({ subject: SUBJECT, sessionId: SESSION, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH })
  t.same(tokens.verify(tokens.sign(claims), 'access', Date.now()), claims)
  t.throws(() => tokens.verify(tokens.sign(claims), 'refresh', Date.now()), TokenInvalid, 'the type claim is checked')
})

t.test('6,000 forged 15 KB tokens are all refused and leave the verified-token cache empty', async (t) => {
  const tokens = issuer()
  const claims = tokens.claims({ subject: SUBJECT, sessionId: SESSION, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH })
  let refused = 0
  for (let i = 0; i < 6000; i++) {
    try {
      tokens.verify(forged(claims, 15_000, i), 'access', Date.now())
    } catch (err) {
      if (err instanceof TokenInvalid) refused++
    }
  }
  t.equal(refused, 6000, 'every one is invalid')
  t.equal(tokens.cache.size, 0, 'no entry')
  t.equal(tokens.cache.bytes, 0, 'no byte')
  // the negative control: what verifies is cached
  tokens.verify(tokens.sign(claims), 'access', Date.now())
  t.equal(tokens.cache.size, 1)
  t.ok(tokens.cache.bytes > 0)
})

t.test('a token verified once is served from the cache: the signature is not checked again', async (t) => {
  const codec = createTokenCodec(TEST_SECRET, 'gatehouse')
  const tokens = new TokenIssuer(codec, LIFETIMES)
  const verifies = t.capture(codec, 'verify', codec.verify)
  const token = tokens.sign(tokens.claims({ subject: SUBJECT, sessionId: SESSION, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH }))
  const first = tokens.verify(token, 'access', Date.now())
  t.equal(tokens.verify(token, 'access', Date.now()), first, 'the cached claims')
  t.equal(verifies().length, 1, 'one signature check for two verifications')
  t.throws(() => tokens.verify(token, 'refresh', Date.now()), TokenInvalid, 'a cached access token is still no refresh token')
})

t.test('a token that ends like a cached one but differs before is no hit: its signature is checked and it is refused', async (t) => {
  const codec = createTokenCodec(TEST_SECRET, 'gatehouse')
  const tokens = new TokenIssuer(codec, LIFETIMES)
  const verifies = t.capture(codec, 'verify', codec.verify)
  const claims = tokens.claims({ subject: SUBJECT, sessionId: SESSION, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH })
  const token = tokens.sign(claims)
  tokens.verify(token, 'access', Date.now())
  t.ok(tokens.cache.has(token))
  // the payload swapped for a superuser's, the real token's signature kept: the cache files
  // entries by the signature's end, so this one lands on the real token's entry
  const [header = '', , signature = ''] = token.split('.')
  const lifted = `${header}.${b64({ ...claims, is_superuser: true })}.${signature}`
  t.notOk(tokens.cache.has(lifted))
  t.throws(() => tokens.verify(lifted, 'access', Date.now()), TokenInvalid)
  t.equal(verifies().length, 2, 'the real token and the lifted one each went to the signature check')
  t.same(tokens.verify(token, 'access', Date.now()), claims, 'the real token is still served from its entry')
  t.equal(verifies().length, 0, 'without another check')
})

t.test('a cached token is refused as expired from the millisecond its exp is reached, and leaves the cache', async (t) => {
  const tokens = issuer()
  const claims = tokens.claims({ subject: SUBJECT, sessionId: SESSION, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH })
  const token = tokens.sign(claims)
  t.same(tokens.verify(token, 'access', claims.exp * 1000 - 1), claims)
  t.equal(tokens.cache.size, 1)
  t.throws(() => tokens.verify(token, 'access', claims.exp * 1000), TokenExpired)
  t.equal(tokens.cache.size, 0)
  t.equal(tokens.cache.bytes, 0)
})

t.test('the cache is bounded by entries and by bytes, the oldest leaving first', async (t) => {
  const byCount = issuer({ maxEntries: 3 })
  const signed = Array.from({ length: 5 }, (_, i) => byCount.sign(byCount.claims({ subject: SUBJECT, sessionId: `${SESSION.slice(0, -1)}${i}`, type: 'access', nowSeconds: nowSeconds(), strength: STRENGTH })))
  for (const token of signed) byCount.verify(token, 'access', Date.now())
  t.equal(byCount.cache.size, 3)
  const perEntry = byCount.cache.bytes / 3

  const byBytes = issuer({ maxBytes: Math.floor(perEntry * 2.5) })
  for (const token of signed) byBytes.verify(token, 'access', Date.now())
  t.equal(byBytes.cache.size, 2)
  t.ok(byBytes.cache.bytes <= perEntry * 2.5)
  const codecOf = byBytes as unknown as { codec: { verify (token: string): unknown } }
  const verifies = t.capture(codecOf.codec, 'verify', codecOf.codec.verify)
  byBytes.verify(signed[4] as string, 'access', Date.now())
  byBytes.verify(signed[0] as string, 'access', Date.now())
  t.equal(verifies().length, 1, 'the newest was kept, the oldest was not')

  const off = issuer({ maxEntries: 0 })
  off.verify(signed[0] as string, 'access', Date.now())
  t.equal(off.cache.size, 0, 'TOKEN_CACHE_SIZE=0 turns it off')
})

t.test('the server starts with no process warning: the development-secret notice is a warn line of its log', async (t) => {
  const server = startServer({ DATA_DIR: tempDir(t), PORT: '0', LOG_LEVEL: 'info' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  await server.waitFor(/"msg":"Server listening at /)
  server.child.kill('SIGTERM')
  t.equal((await server.exited).code, 0)
  t.equal(server.stderr(), '', 'nothing on stderr: no Node warning, no "(Use `node --trace-warnings ...`" hint')
  t.notMatch(server.stdout(), /trace-warnings|FAST_JWT/)
  const notices = server.lines().filter((line) => /JWT_SECRET/.test(line.msg))
  t.equal(notices.length, 1)
  t.match(notices[0], { level: 40, msg: /^JWT_SECRET is not set: generated a development secret in .*jwt-secret\. Set JWT_SECRET in production\.$/ })
})
