import { randomBytes } from 'node:crypto'
import t from 'tap'
import { authHeader, build, createUser, login } from '../../../helper.js'
import { INSUFFICIENT_SCOPE, ISO, SUPERUSER_REQUIRED } from '../../../patterns.js'

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const B64URL = /^[A-Za-z0-9_-]+$/

async function superuserToken (app: Awaited<ReturnType<typeof build>>): Promise<string> {
  return (await login(app, await createUser(app, { roles: ['admin'], isSuperuser: true }))).access_token
}

t.test('GET /.well-known/jwks.json under HS256 publishes no key, cacheable for JWKS_MAX_AGE', async (t) => {
  const app = await build(t, { JWKS_MAX_AGE: '5m' })
  const res = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'public, max-age=300')
  t.same(res.json(), { keys: [] })
})

for (const [alg, members] of [['ES256', { kty: 'EC', crv: 'P-256', x: B64URL, y: B64URL }], ['EdDSA', { kty: 'OKP', crv: 'Ed25519', x: B64URL }], ['RS256', { kty: 'RSA', n: B64URL, e: 'AQAB' }]] as const) {
  t.test(`GET /.well-known/jwks.json under ${alg} publishes the current and the standby public keys and no private member`, async (t) => {
    const app = await build(t, { JWT_ALG: alg, DATA_ENCRYPTION_KEYS: KEYS })
    const res = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['cache-control'], 'public, max-age=600')
    const [key, standby, ...rest] = res.json().keys
    t.same(rest, [])
    t.same((await app.services.keys.list()).map((k) => k.kid), [key.kid, standby.kid])
    for (const published of [key, standby]) {
      t.same(Object.keys(published).sort(), ['alg', 'kid', 'use', ...Object.keys(members)].sort(), 'exactly the public members')
      t.match(published, { alg, use: 'sig', kid: /^[A-Za-z0-9_-]{16}$/, ...members })
    }
  })
}

t.test('/api/keys: a superuser lists, rotates and revokes; each change is audited', async (t) => {
  const app = await build(t, { JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS })
  const headers = authHeader(await superuserToken(app))
  const listed = await app.inject({ method: 'GET', url: '/api/keys', headers })
  t.equal(listed.statusCode, 200)
  t.equal(listed.headers['cache-control'], 'no-store')
  const [first, standby] = listed.json().data
  t.same(listed.json(), {
    data: [
      { kid: first.kid, alg: 'ES256', state: 'current', created_at: first.created_at, activates_at: first.created_at, retires_at: null },
      { kid: standby.kid, alg: 'ES256', state: 'next', created_at: standby.created_at, activates_at: null, retires_at: null }
    ]
  })

  const rotated = await app.inject({ method: 'POST', url: '/api/keys/rotate', headers })
  t.equal(rotated.statusCode, 201)
  const next = rotated.json()
  t.match(next.created_at, ISO)
  t.same(next, { kid: next.kid, alg: 'ES256', state: 'next', created_at: next.created_at, activates_at: new Date(Date.parse(next.created_at) + 1200_000).toISOString(), retires_at: null })
  const jwks = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
  t.same(jwks.json().keys.map((k: { kid: string }) => k.kid), [first.kid, standby.kid, next.kid], 'the next key is published at once')

  const revoked = await app.inject({ method: 'DELETE', url: `/api/keys/${next.kid}`, headers })
  t.equal(revoked.statusCode, 204)
  t.equal(revoked.body, '')
  t.same((await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid), [first.kid, standby.kid], 'unpublished at once')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/keys/${next.kid}`, headers })).statusCode, 204, 'again 204')
  const unknown = await app.inject({ method: 'DELETE', url: '/api/keys/AAAAAAAAAAAAAAAA', headers })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { error: 'Not Found', message: 'Signing key not found', code: 'not_found' })
  const after = (await app.inject({ method: 'GET', url: '/api/keys', headers })).json().data
  t.same(after.map((k: { kid: string, state: string }) => [k.kid, k.state]), [[first.kid, 'current'], [standby.kid, 'next'], [next.kid, 'revoked']])

  await new Promise((resolve) => setTimeout(resolve, 50))
  const audit = await app.inject({ method: 'GET', url: '/api/audit?per_page=100', headers })
  const events = audit.json().data.filter((e: { event: string }) => e.event.startsWith('signing_key')).map((e: { event: string, detail: string, outcome: string }) => [e.event, e.detail, e.outcome])
  t.same(events, [['signing_key_revoked', next.kid, 'success'], ['signing_key_rotated', next.kid, 'success']])
})

t.test('/api/keys is for superusers only: an admin gets 403, no token 401', async (t) => {
  const app = await build(t, { JWT_ALG: 'EdDSA', DATA_ENCRYPTION_KEYS: KEYS })
  const admin = authHeader((await login(app, await createUser(app, { roles: ['admin'] }))).access_token)
  for (const [method, url] of [['GET', '/api/keys'], ['POST', '/api/keys/rotate'], ['DELETE', '/api/keys/AAAAAAAAAAAAAAAA']] as const) {
    const res = await app.inject({ method, url, headers: admin })
    t.equal(res.statusCode, 403, `${method} ${url}`)
    t.strictSame(res.json(), SUPERUSER_REQUIRED)
    t.equal(res.headers['www-authenticate'], INSUFFICIENT_SCOPE)
    t.equal((await app.inject({ method, url })).statusCode, 401)
  }
  t.equal((await app.services.keys.list()).length, 2, 'nothing rotated: the current key and the standby')
})

t.test('under HS256 /api/keys lists nothing and rotating answers 409 signing_keys_disabled', async (t) => {
  const app = await build(t)
  const headers = authHeader(await superuserToken(app))
  t.same((await app.inject({ method: 'GET', url: '/api/keys', headers })).json(), { data: [] })
  const res = await app.inject({ method: 'POST', url: '/api/keys/rotate', headers })
  t.equal(res.statusCode, 409)
  t.same(res.json(), { error: 'Conflict', message: 'Signing keys exist only with an asymmetric JWT_ALG (ES256, EdDSA or RS256)', code: 'signing_keys_disabled' })
  const revoke = await app.inject({ method: 'DELETE', url: '/api/keys/AAAAAAAAAAAAAAAA', headers })
  t.equal(revoke.statusCode, 409)
})
