import { createHmac, generateKeyPairSync, randomBytes, sign as cryptoSign } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, claimsOf, createUser, login, TEST_SECRET } from '../../../helper.js'

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as Record<string, unknown>

/** A token with this header and payload, signed by `signer` over `header.payload`. */
function forge (header: Record<string, unknown>, payload: object, signer: (input: string) => Buffer | string): string {
  const input = `${b64(header)}.${b64(payload)}`
  const signature = signer(input)
  return `${input}.${typeof signature === 'string' ? signature : signature.toString('base64url')}`
}
const hs256 = (secret: string | Buffer) => (input: string) => createHmac('sha256', secret).update(input).digest()

async function me (app: FastifyInstance, token: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })
}

function refused (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.statusCode, 401, what)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token is invalid"', what)
  t.same(res.json(), INVALID, what)
}

t.test('forged ES256 access tokens are refused with 401 token_invalid; the real one passes', async (t) => {
  const app = await build(t, { JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS })
  const user = await createUser(app)
  const { access_token: real } = await login(app, user)
  const claims = claimsOf(real)
  const header = headerOf(real)
  const kid = header.kid as string
  t.equal((await me(app, real)).statusCode, 200, 'control: the real token')

  // an attacker's own P-256 pair, unknown to gatehouse
  const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const es256 = (input: string) => cryptoSign('sha256', Buffer.from(input), { key: attacker.privateKey, dsaEncoding: 'ieee-p1363' })
  const [jwks] = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys
  const publicPem = (await import('node:crypto')).createPublicKey({ key: jwks, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString()

  // a listener that would see any fetch of a key a token names
  let fetched = 0
  const server = createServer((_req, res) => { fetched++; res.end('{}') })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/jwks.json`

  const forgeries: Record<string, string> = {
    'an unknown kid': forge({ ...header, kid: 'AAAAAAAAAAAAAAAA' }, claims, es256),
    'no kid': forge({ alg: 'ES256', typ: 'at+jwt' }, claims, es256),
    'an oversized kid': forge({ ...header, kid: 'k'.repeat(10_000) }, claims, es256),
    'the real kid, signed by another key': forge(header, claims, es256),
    'HS256 with the public key as the secret': forge({ alg: 'HS256', typ: 'at+jwt', kid }, claims, hs256(publicPem)),
    'HS256 under JWT_SECRET (the other mode)': forge({ alg: 'HS256', typ: 'at+jwt' }, claims, hs256(TEST_SECRET)),
    'a jku naming the attacker\'s key set': forge({ ...header, kid: 'attacker', jku: url }, claims, es256),
    'an x5u naming the attacker\'s certificate': forge({ ...header, kid: 'attacker', x5u: url }, claims, es256),
    'an embedded jwk': forge({ ...header, kid: 'attacker', jwk: attacker.publicKey.export({ format: 'jwk' }) }, claims, es256),
    'alg none': `${b64({ alg: 'none', kid })}.${b64(claims)}.`
  }
  for (const [what, token] of Object.entries(forgeries)) refused(t, await me(app, token), what)
  t.equal(fetched, 0, 'no key was ever fetched from a token\'s header')
  // control: the real token still passes after every forgery
  t.equal((await me(app, real)).statusCode, 200)
})

t.test('a revoked key\'s tokens are refused at once, even when verified and cached before', async (t) => {
  const app = await build(t, { JWT_ALG: 'EdDSA', DATA_ENCRYPTION_KEYS: KEYS })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  t.equal((await me(app, token)).statusCode, 200, 'verified and cached')
  await app.services.keys.revoke(headerOf(token).kid as string, { ip: 'cli' })
  refused(t, await me(app, token), 'the revoked key\'s token')
  const { access_token: fresh } = await login(app, user)
  t.not(headerOf(fresh).kid, headerOf(token).kid)
  t.equal((await me(app, fresh)).statusCode, 200, 'a new key signs at once')
})

t.test('under HS256 an asymmetric token is refused and a kid header is ignored', async (t) => {
  const signing = await build(t, { JWT_ALG: 'RS256', DATA_ENCRYPTION_KEYS: KEYS })
  const hsApp = await build(t)
  const user = await createUser(signing)
  const { access_token: rs256 } = await login(signing, user)
  refused(t, await me(hsApp, rs256), 'an RS256 token where HS256 is configured')
  const other = await createUser(hsApp)
  const { access_token: real } = await login(hsApp, other)
  const withKid = forge({ ...headerOf(real), kid: 'anything' }, claimsOf(real), hs256(TEST_SECRET))
  t.equal((await me(hsApp, withKid)).statusCode, 200, 'the kid is ignored under HS256')
})

t.test('JWT_AUDIENCE is signed into access tokens and required exactly', async (t) => {
  const app = await build(t, { JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS, JWT_AUDIENCE: 'https://api.example.com' })
  const user = await createUser(app)
  const { access_token: token, refresh_token: refresh } = await login(app, user)
  t.equal((claimsOf(token) as unknown as { aud: string }).aud, 'https://api.example.com')
  t.equal((claimsOf(refresh) as unknown as { aud?: string }).aud, undefined, 'refresh tokens carry none')
  t.equal((await me(app, token)).statusCode, 200)
  const hs = await build(t, { JWT_AUDIENCE: 'https://api.example.com' })
  const u2 = await createUser(hs)
  const { access_token: hsToken } = await login(hs, u2)
  const { aud, ...noAud } = claimsOf(hsToken) as unknown as Record<string, unknown>
  t.equal(aud, 'https://api.example.com')
  refused(t, await me(hs, forge(headerOf(hsToken), noAud, hs256(TEST_SECRET))), 'HS256 without aud')
  refused(t, await me(hs, forge(headerOf(hsToken), { ...noAud, aud: 'https://other.example.com' }, hs256(TEST_SECRET))), 'HS256 with another aud')
  t.equal((await me(hs, forge(headerOf(hsToken), { ...noAud, aud }, hs256(TEST_SECRET)))).statusCode, 200, 'control: re-signed with the right aud')
})
