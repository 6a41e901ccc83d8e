import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { authHeader, build, changePassword, createUser, login, rawSql, tempDir, type CreatedUser } from '../../helper.js'
import { ISO, MISSING_ADMIN, REVOKED } from '../../patterns.js'
import { base62Checksum } from '../../../src/api-keys/format.js'
import { idpValues } from './identities-support.js'
import { latestMail, NEW_PASSWORD, recoveryApp, resetTokenIn } from '../auth/recovery/support.js'

/*
 * The caller's own API keys (routes/api/api-keys.ts, src/api-keys/, docs/api-keys.md): the format,
 * the claims, where a key is taken and where refused, the bounds on roles, lifetime and count, and
 * how a key ends (revoked, expired, its owner's role removed or the owner deleted) while password
 * changes, resets and logouts leave it alone; what the verifier keeps in memory (src/api-keys/key-verifier.ts:
 * ended keys too, so a key presented again reads no row), last_used_at written off the request path,
 * and the keyed hash under DATA_ENCRYPTION_KEYS.
 */

const ON = { ENABLE_API_KEYS: true }
const KEY = /^gh_[0-9a-z]{12}_[0-9A-Za-z]{38}$/
const KEY_ID = /^[0-9a-z]{12}$/
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const EXPIRED = { error: 'Unauthorized', message: 'The token has expired', code: 'token_expired' }
const SESSION_REQUIRED = { error: 'Forbidden', message: 'You are not allowed to perform this action', code: 'forbidden', reason: 'session_required' }
const KEY_NOT_FOUND = { error: 'Not Found', message: 'API key not found', code: 'not_found' }
const DAY = 86_400_000

interface Created { id: string, key: string, name: string, roles: string[], created_at: string, expires_at: string, last_used_at: null }

async function createKey (app: FastifyInstance, token: string, payload: Record<string, unknown>) {
  return await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: authHeader(token), payload })
}

async function keyOf (app: FastifyInstance, user: CreatedUser, payload: Record<string, unknown> = { name: 'ci' }): Promise<Created> {
  const { access_token: token } = await login(app, user)
  const res = await createKey(app, token, payload)
  if (res.statusCode !== 201) throw new Error(`creating a key failed: ${res.body}`)
  return res.json() as Created
}

async function self (app: FastifyInstance, user: CreatedUser, key: string) {
  return await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(key) })
}

/** A key of the shape, with a good checksum, naming `id` with a secret that is not its own. */
function wrongSecretFor (id: string): string {
  const body = `gh_${id}_${'A'.repeat(32)}`
  return body + base62Checksum(body)
}

/** Every database read of a key by id from now on (the calls still go through). */
function keyReads (t: Test, app: FastifyInstance): () => unknown[][] {
  const repository = app.store.apiKeys
  const reads = t.capture(repository, 'findOwned', repository.findOwned.bind(repository))
  return () => reads().map((call) => call.args)
}

t.test('POST /api/auth/api-keys answers 201 with the key once, and GET lists it without the key', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app, { roles: ['user', 'reports'] })
  const { access_token: token } = await login(app, user)
  const before = Date.now()
  const res = await createKey(app, token, { name: 'nightly export', roles: ['reports'] })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json() as Created
  t.match(body.key, KEY)
  t.match(body.id, KEY_ID)
  t.equal(body.key.slice(3, 15), body.id, 'the id is the key\'s second part')
  t.match(body.created_at, ISO)
  const lifetime = Date.parse(body.expires_at) - Date.parse(body.created_at)
  t.equal(lifetime, 90 * DAY, 'expires_at defaults to API_KEY_MAX_TTL')
  t.ok(Date.parse(body.created_at) >= before - 1)
  t.strictSame(body, { id: body.id, name: 'nightly export', roles: ['reports'], created_at: body.created_at, expires_at: body.expires_at, last_used_at: null, key: body.key })

  const list = await app.inject({ method: 'GET', url: '/api/auth/api-keys', headers: authHeader(token) })
  t.equal(list.statusCode, 200)
  const { key: _key, ...listed } = body
  t.strictSame(list.json(), { data: [listed] })
  t.notOk(list.body.includes(body.key.slice(16)), 'never the secret')
  const [row] = await rawSql<{ secret_hash: string, hash_key_id: string }>(app.config, sql`select secret_hash, hash_key_id from api_keys`)
  t.match(row?.secret_hash, /^[\w-]{43}$/, 'a keyed hash (HMAC-SHA-256, base64url) is stored')
  t.equal(row?.hash_key_id, app.config.dataEncryptionKeys?.[0]?.id, 'beside the id of the data key it was made under')
  t.notOk(JSON.stringify(row).includes(body.key.slice(16)), 'never the secret itself')
})

t.test('a key passes as an access token on /api/* with the key\'s claims, and only there', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app, { roles: ['user', 'reports'], isSuperuser: true })
  const created = await keyOf(app, user, { name: 'reports', roles: ['reports'] })
  const claims = await app.services.apiKeys?.verifier.verify(created.key)
  t.strictSame(claims, {
    user_id: user.id,
    email: user.email,
    roles: ['reports'],
    session_id: created.id,
    is_superuser: false,
    type: 'access',
    sub: user.id,
    iat: Math.floor(Date.parse(created.created_at) / 1000),
    exp: Math.floor(Date.parse(created.expires_at) / 1000),
    iss: app.config.jwtIssuer,
    jti: created.id,
    aal: 'aal1',
    amr: [],
    auth_time: Math.floor(Date.parse(created.created_at) / 1000),
    kind: 'api_key',
    key_id: created.id
  }, 'is_superuser is false even for a superuser\'s key')
  const res = await self(app, user, created.key)
  t.equal(res.statusCode, 200, 'the user themself')
  const list = await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(created.key) })
  t.equal(list.statusCode, 403, 'the owner is a superuser; the key is not')
  t.same(list.json(), MISSING_ADMIN)
  for (const url of ['/auth/me', '/auth/logout']) {
    const outside = await app.inject({ method: url === '/auth/me' ? 'GET' : 'POST', url, headers: authHeader(created.key) })
    t.equal(outside.statusCode, 401, `${url} does not take a key`)
    t.same(outside.json(), INVALID)
  }
})

/** Every feature with routes under /api/auth on: passkeys, the OpenID Connect provider's grants, connected accounts. */
async function everyFeature (t: Test): Promise<FastifyInstance> {
  return await build(t, idpValues(t, { ...ON, ENABLE_PASSKEYS: true, PUBLIC_URL: 'http://auth.gh.localhost', ENABLE_PORTAL: true, ENABLE_OIDC_PROVIDER: true, JWT_ALG: 'ES256' }))
}

t.test('every /api/auth/* route refuses a key: 403 session_required', async (t) => {
  const app = await everyFeature(t)
  const user = await createUser(app)
  const { key } = await keyOf(app, user)
  const calls = [
    { method: 'GET' as const, url: '/api/auth/sessions' },
    { method: 'GET' as const, url: '/api/auth/api-keys' },
    { method: 'POST' as const, url: '/api/auth/api-keys', payload: { name: 'child' } },
    { method: 'POST' as const, url: '/api/auth/change-password', payload: { current_password: user.password, new_password: 'Another-Pass-1' } },
    { method: 'GET' as const, url: '/api/auth/passkeys' },
    { method: 'PATCH' as const, url: '/api/auth/passkeys/bm90LWEtcGFzc2tleQ', payload: { name: 'renamed' } },
    { method: 'DELETE' as const, url: '/api/auth/passkeys/bm90LWEtcGFzc2tleQ' },
    { method: 'GET' as const, url: '/api/auth/grants' },
    { method: 'DELETE' as const, url: '/api/auth/grants/some-app' },
    { method: 'GET' as const, url: '/api/auth/identities' },
    { method: 'DELETE' as const, url: '/api/auth/identities/00000000-0000-4000-8000-000000000000' }
  ]
  for (const call of calls) {
    const res = await app.inject({ ...call, headers: authHeader(key) })
    t.equal(res.statusCode, 403, `${call.method} ${call.url}`)
    t.same(res.json(), SESSION_REQUIRED)
  }
  const { access_token: token } = await login(app, user)
  const withSession = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(token) })
  t.equal(withSession.statusCode, 200, 'the negative control: a session passes')
})

t.test('a key is taken as a Bearer header only: in the access_token cookie it is token_invalid, and /oauth2/userinfo refuses it', async (t) => {
  const app = await everyFeature(t)
  const user = await createUser(app)
  const { key } = await keyOf(app, user)
  t.equal((await self(app, user, key)).statusCode, 200, 'the negative control: the same key as Bearer')
  const cookie = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, cookies: { access_token: key } })
  t.same([cookie.statusCode, cookie.json()], [401, INVALID])
  for (const method of ['GET', 'POST'] as const) {
    const userinfo = await app.inject({ method, url: '/oauth2/userinfo', headers: authHeader(key) })
    t.same([userinfo.statusCode, userinfo.json()], [401, INVALID], `${method} /oauth2/userinfo`)
    t.match(userinfo.headers['www-authenticate'], /^Bearer realm="gatehouse", error="invalid_token"/)
  }
})

t.test('roles must be the owner\'s at creation: else 403 missing_role naming the missing ones', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app, { roles: ['user'] })
  const { access_token: token } = await login(app, user)
  const res = await createKey(app, token, { name: 'too much', roles: ['user', 'admin'] })
  t.equal(res.statusCode, 403)
  t.same(res.json(), { ...MISSING_ADMIN, required_roles: ['admin'] })
  const ok = await createKey(app, token, { name: 'fine', roles: [] })
  t.equal(ok.statusCode, 201, 'no roles at all is a subset')
  t.same(ok.json().roles, [])
})

t.test('expires_at must be in the future and at most API_KEY_MAX_TTL away: else 422', async (t) => {
  const app = await build(t, { ...ON, API_KEY_MAX_TTL: '1d' })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const past = await createKey(app, token, { name: 'past', expires_at: new Date(Date.now() - 1000).toISOString() })
  t.equal(past.statusCode, 422)
  t.same(past.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { expires_at: ['The expires_at field must be a time in the future'] } })
  const far = await createKey(app, token, { name: 'far', expires_at: new Date(Date.now() + DAY + 60_000).toISOString() })
  t.equal(far.statusCode, 422)
  t.match(far.json().errors.expires_at[0], /^The expires_at field must not exceed \d{4}-/)
  const malformed = await createKey(app, token, { name: 'x', expires_at: 'tomorrow' })
  t.equal(malformed.statusCode, 422)
  const within = new Date(Date.now() + DAY - 60_000).toISOString()
  const ok = await createKey(app, token, { name: 'ok', expires_at: within })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().expires_at, within)
  const long = await createKey(app, token, { name: 'n'.repeat(101) })
  t.equal(long.statusCode, 422, 'name is 1..100')
  const stray = await createKey(app, token, { name: 'x', is_superuser: true })
  t.equal(stray.statusCode, 422, 'unknown fields are refused')
})

t.test('API_KEYS_MAX_PER_USER bounds the live keys: beyond it 409 too_many_api_keys; a revoked key frees its place', async (t) => {
  const app = await build(t, { ...ON, API_KEYS_MAX_PER_USER: 2 })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const first = await createKey(app, token, { name: 'a' })
  t.equal((await createKey(app, token, { name: 'b' })).statusCode, 201)
  const third = await createKey(app, token, { name: 'c' })
  t.equal(third.statusCode, 409)
  t.same(third.json(), { error: 'Conflict', message: 'The account has as many API keys as it may have', code: 'too_many_api_keys' })
  const revoked = await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${first.json().id as string}`, headers: authHeader(token) })
  t.equal(revoked.statusCode, 204)
  t.equal((await createKey(app, token, { name: 'c' })).statusCode, 201)
})

t.test('a revoked key is refused with 401 token_revoked; another user\'s key or an unknown id is 404', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const other = await createUser(app)
  const created = await keyOf(app, user)
  t.equal((await self(app, user, created.key)).statusCode, 200)
  const { access_token: otherToken } = await login(app, other)
  const foreign = await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${created.id}`, headers: authHeader(otherToken) })
  t.equal(foreign.statusCode, 404)
  t.same(foreign.json(), KEY_NOT_FOUND)
  t.equal((await self(app, user, created.key)).statusCode, 200, 'still working')
  const { access_token: token } = await login(app, user)
  const res = await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${created.id}`, headers: authHeader(token) })
  t.equal(res.statusCode, 204)
  const refused = await self(app, user, created.key)
  t.equal(refused.statusCode, 401)
  t.same(refused.json(), REVOKED)
  t.match(refused.headers['www-authenticate'], /^Bearer realm="gatehouse", error="invalid_token"/)
  const again = await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${created.id}`, headers: authHeader(token) })
  t.same([again.statusCode, again.json()], [404, KEY_NOT_FOUND], 'an ended key is not found')
  const unknown = await app.inject({ method: 'DELETE', url: '/api/auth/api-keys/000000000000', headers: authHeader(token) })
  t.same([unknown.statusCode, unknown.json()], [404, KEY_NOT_FOUND])
  const list = await app.inject({ method: 'GET', url: '/api/auth/api-keys', headers: authHeader(token) })
  t.same(list.json(), { data: [] }, 'a revoked key is not listed')
})

t.test('an expired key is 401 token_expired', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const created = await keyOf(app, user)
  await rawSql(app.config, sql`update api_keys set expires_at = ${new Date(Date.now() - 1000).toISOString()}`)
  const res = await self(app, user, created.key)
  t.equal(res.statusCode, 401)
  t.same(res.json(), EXPIRED)
})

t.test('an ended key stays in memory: revoked or expired, five presentations read the database once, and a wrong secret is still token_invalid', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const revoked = await keyOf(app, user, { name: 'revoked' })
  const expired = await keyOf(app, user, { name: 'expired' })
  const { access_token: token } = await login(app, user)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${revoked.id}`, headers: authHeader(token) })).statusCode, 204)
  await rawSql(app.config, sql`update api_keys set expires_at = ${new Date(Date.now() - 1000).toISOString()} where id = ${expired.id}`)
  // neither key was presented yet: the first presentation is a miss, as on a fresh instance
  const reads = keyReads(t, app)
  for (const [created, answer] of [[revoked, REVOKED], [expired, EXPIRED]] as const) {
    for (let i = 1; i <= 5; i++) {
      const res = await self(app, user, created.key)
      t.same([res.statusCode, res.json()], [401, answer], `${created.name}, presentation ${i}`)
    }
    const wrong = await self(app, user, wrongSecretFor(created.id))
    t.same([wrong.statusCode, wrong.json()], [401, INVALID], 'the keyed hash is checked before the state is told')
    t.same(reads(), [[created.id]], `${created.name}: one read for five presentations and a wrong secret`)
  }
})

t.test('a key held in memory is refused once another instance revokes it or deletes its owner, from memory, within a second', async (t) => {
  const dataDir = tempDir(t)
  const values = { ...ON, DATA_DIR: dataDir, REVOCATION_POLL_MS: 100 }
  const a = await build(t, values)
  const b = await build(t, values)
  const admin = await createUser(a, { roles: ['admin'] })
  const { access_token: adminToken } = await login(a, admin)
  const user = await createUser(a)
  const revoked = await keyOf(a, user, { name: 'revoked' })
  const orphaned = await keyOf(a, user, { name: 'orphaned' })
  for (const { key } of [revoked, orphaned]) t.equal((await self(b, user, key)).statusCode, 200, 'B reads and holds the key')
  const reads = keyReads(t, b)

  // asked of /auth/verify, which answers 200 until the key is refused whether or not its owner is there
  const verifyOnB = async (key: string) => await b.inject({ method: 'GET', url: '/auth/verify', headers: authHeader(key) })
  const refusedByB = async (key: string, what: string) => {
    const started = Date.now()
    let res = await verifyOnB(key)
    while (res.statusCode === 200 && Date.now() - started < 1000) {
      await sleep(20)
      res = await verifyOnB(key)
    }
    t.same([res.statusCode, res.json()], [401, REVOKED], `${what}: B refused it after ${Date.now() - started} ms`)
  }
  t.equal((await a.inject({ method: 'DELETE', url: `/api/users/${user.id}/api-keys/${revoked.id}`, headers: authHeader(adminToken) })).statusCode, 204)
  await refusedByB(revoked.key, 'revoked on A')
  t.equal((await a.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })).statusCode, 204)
  await refusedByB(orphaned.key, 'its owner deleted on A')
  for (let i = 0; i < 3; i++) t.same((await self(b, user, orphaned.key)).json(), REVOKED)
  t.same(reads(), [], 'B learnt both from the revocation index, and read no key again')
})

t.test('a key that expires while held in memory is 401 token_expired', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const created = await keyOf(app, user, { name: 'short', expires_at: new Date(Date.now() + 5000).toISOString() })
  t.equal((await self(app, user, created.key)).statusCode, 200, 'held after its first use')
  const reads = keyReads(t, app)
  await sleep(Date.parse(created.expires_at) - Date.now() + 50)
  const res = await self(app, user, created.key)
  t.same([res.statusCode, res.json()], [401, EXPIRED])
  t.same(reads(), [], 'told from memory')
})

t.test('an unknown key, a wrong secret and a bad checksum are all 401 token_invalid; a bad checksum without any lookup', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const created = await keyOf(app, user)
  t.equal((await self(app, user, created.key)).statusCode, 200, 'the key itself passes, and is held as verified')
  const wrongSecret = wrongSecretFor(created.id)
  const unknownBody = `gh_zzzzzzzzzzzz_${created.key.slice(16, 48)}`
  const unknown = unknownBody + base62Checksum(unknownBody)
  const last = created.key.at(-1) === '0' ? '1' : '0'
  const badChecksum = created.key.slice(0, -1) + last
  for (const [what, key] of [['a wrong secret', wrongSecret], ['an unknown id', unknown], ['a bad checksum', badChecksum], ['a short key', created.key.slice(0, -1)]]) {
    const res = await self(app, user, key as string)
    t.equal(res.statusCode, 401, what as string)
    t.same(res.json(), INVALID)
  }
  const verifier = app.services.apiKeys?.verifier
  t.throws(() => verifier?.verify(badChecksum), { code: 'TOKEN_INVALID' }, 'refused synchronously: no database read was started')
  const lookup = verifier?.verify(unknown)
  t.type(lookup, Promise, 'an unknown id with a good checksum is looked up')
  await t.rejects(lookup as Promise<unknown>, { code: 'TOKEN_INVALID' })
  t.notOk(verifier?.verify(created.key) instanceof Promise, 'a known key is checked from memory')
})

t.test('a password change and logouts leave keys alone', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const { key } = await keyOf(app, user)
  const session = await login(app, user)
  t.equal((await changePassword(app, session.access_token, user.password, 'New-Password-9')).statusCode, 200)
  const next = await login(app, { email: user.email, password: 'New-Password-9' })
  t.equal((await app.inject({ method: 'POST', url: '/auth/logout?scope=global', headers: authHeader(next.access_token) })).statusCode, 204)
  t.equal((await self(app, user, key)).statusCode, 200)
})

t.test('a password reset leaves keys alone while it ends the sessions; an admin sets no password through PUT /api/users/:id', async (t) => {
  const app = await recoveryApp(t, ON)
  const admin = await createUser(app, { roles: ['admin'] })
  const user = await createUser(app)
  const { key } = await keyOf(app, user)
  const session = await login(app, user)
  const { access_token: adminToken } = await login(app, admin)
  const put = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(adminToken), payload: { password: 'Admin-Chosen-Pass-7' } })
  t.equal(put.statusCode, 422, 'no password field: an admin cannot set one over the API')
  t.equal((await app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: user.email } })).statusCode, 202)
  const token = resetTokenIn((await latestMail(app, user.email)).text)
  const reset = await app.inject({ method: 'POST', url: '/auth/reset-password', payload: { token, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200)
  const ended = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(session.access_token) })
  t.same([ended.statusCode, ended.json()], [401, REVOKED], 'the negative control: the reset ended the session signed in before it')
  t.equal((await self(app, user, key)).statusCode, 200, 'the key works on')
})

t.test('the stored hash is keyed: an app with other DATA_ENCRYPTION_KEYS on the same data refuses the key, and the hash is the HMAC docs/api-keys.md describes', async (t) => {
  const dataDir = tempDir(t)
  const dataKey = randomBytes(32)
  const values = { ...ON, DATA_DIR: dataDir, DATA_ENCRYPTION_KEYS: `k1:${dataKey.toString('base64')}` }
  const app = await build(t, values)
  const user = await createUser(app)
  const created = await keyOf(app, user)
  const same = await build(t, values)
  t.equal((await self(same, user, created.key)).statusCode, 200, 'the negative control: another app with the same data key takes it')
  const other = await build(t, { ...values, DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` })
  const refused = await self(other, user, created.key)
  t.same([refused.statusCode, refused.json()], [401, INVALID], 'a data key of the same id, other bytes')
  // HMAC-SHA-256 of the whole key, under HKDF-SHA-256 of the data key with salt "gatehouse" and info "gatehouse api keys"
  const [row] = await rawSql<{ secret_hash: string }>(app.config, sql`select secret_hash from api_keys`)
  const derived = Buffer.from(hkdfSync('sha256', dataKey, 'gatehouse', 'gatehouse api keys', 32))
  t.equal(row?.secret_hash, createHmac('sha256', derived).update(created.key).digest('base64url'))
})

t.test('an owner losing a role a key holds ends that key, not the others; deleting the owner ends them all', async (t) => {
  const app = await build(t, ON)
  const admin = await createUser(app, { roles: ['admin'] })
  const user = await createUser(app, { roles: ['user', 'reports'] })
  const reports = await keyOf(app, user, { name: 'reports', roles: ['reports'] })
  const plain = await keyOf(app, user, { name: 'plain', roles: ['user'] })
  const { access_token: adminToken } = await login(app, admin)
  const granted = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(adminToken), payload: { roles: ['user', 'reports', 'extra'] } })
  t.equal(granted.statusCode, 200)
  t.equal((await self(app, user, reports.key)).statusCode, 200, 'granting a role ends nothing')
  const removed = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(adminToken), payload: { roles: ['user'] } })
  t.equal(removed.statusCode, 200)
  const refused = await self(app, user, reports.key)
  t.same([refused.statusCode, refused.json()], [401, REVOKED])
  t.equal((await self(app, user, plain.key)).statusCode, 200, 'a key without the lost role keeps working')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: authHeader(adminToken) })).statusCode, 204)
  const gone = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: authHeader(plain.key) })
  t.same([gone.statusCode, gone.json()], [401, REVOKED])
  // an instance that never held the key finds no row (gone with its owner) but the revocation
  app.services.apiKeys?.verifier.forget(plain.id)
  const fresh = await self(app, user, plain.key)
  t.same([fresh.statusCode, fresh.json()], [401, REVOKED], 'as revoked, not as unknown')
})

t.test('creating a key needs recent authentication: an old sign-in gets 403 reauth_required, or proves it with the password', async (t) => {
  const app = await build(t, ON, { clock: () => Date.now() + 10 * 60_000 })
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const stale = await createKey(app, token, { name: 'x' })
  t.equal(stale.statusCode, 403)
  t.same(stale.json(), { error: 'Forbidden', message: 'Sign in again to make this change', code: 'reauth_required', reason: 'reauth_required' })
  const wrong = await createKey(app, token, { name: 'x', password: 'Wrong-Password-1' })
  t.equal(wrong.statusCode, 400)
  t.same(wrong.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  const ok = await createKey(app, token, { name: 'x', password: user.password })
  t.equal(ok.statusCode, 201)
})

t.test('last_used_at is written after a use, off the request path, at most once a minute', async (t) => {
  const app = await build(t, ON)
  const user = await createUser(app)
  const created = await keyOf(app, user)
  t.equal((await self(app, user, created.key)).statusCode, 200)
  let used: string | null = null
  for (let i = 0; i < 50 && used === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    const [row] = await rawSql<{ last_used_at: string | null }>(app.config, sql`select last_used_at from api_keys`)
    used = row?.last_used_at ?? null
  }
  t.match(used, ISO)
  for (let i = 0; i < 3; i++) t.equal((await self(app, user, created.key)).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const [row] = await rawSql<{ last_used_at: string }>(app.config, sql`select last_used_at from api_keys`)
  t.equal(row?.last_used_at, used, 'not written again within the minute')
  const { access_token: token } = await login(app, user)
  const list = await app.inject({ method: 'GET', url: '/api/auth/api-keys', headers: authHeader(token) })
  t.equal(list.json().data[0].last_used_at, used)
})

t.test('last_used_at is written off the request path: a write that never ends, or fails, leaves the answer 200; the failure is logged', async (t) => {
  const lines: string[] = []
  const app = await build(t, { ...ON, LOG_LEVEL: 'error' }, { logStream: { write: (line) => { lines.push(line) } } })
  const user = await createUser(app)
  const hanging = await keyOf(app, user, { name: 'hanging' })
  const failing = await keyOf(app, user, { name: 'failing' })
  const started: string[] = []
  t.capture(app.store.apiKeys, 'touch', async (id: string) => {
    started.push(id)
    if (id === hanging.id) return await new Promise<void>(() => {})
    throw new Error('disk I/O error')
  })
  for (const created of [hanging, failing]) {
    const answered = await Promise.race([self(app, user, created.key), sleep(2000).then(() => undefined)])
    t.equal(answered?.statusCode, 200, `${created.name}: answered without waiting for the write`)
  }
  for (let i = 0; i < 100 && lines.length === 0; i++) await sleep(10)
  t.same(started, [hanging.id, failing.id], 'both writes were started')
  const logged = lines.map((line) => JSON.parse(line) as { level: number, msg: string, err?: { message: string } })
  t.same(logged.map((line) => [line.level, line.msg, line.err?.message]), [[50, 'recording an API key\'s last use failed', 'disk I/O error']])
})

t.test('API_KEY_RATE_LIMIT answers 429 rate_limited with Retry-After beyond the count, never 401', async (t) => {
  const app = await build(t, { ...ON, API_KEY_RATE_LIMIT: '2/m' })
  const user = await createUser(app)
  const { key } = await keyOf(app, user)
  const other = await keyOf(app, user, { name: 'other' })
  t.equal((await self(app, user, key)).statusCode, 200)
  t.equal((await self(app, user, key)).statusCode, 200)
  const refused = await self(app, user, key)
  t.equal(refused.statusCode, 429)
  t.same(refused.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
  const retry = Number(refused.headers['retry-after'])
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  t.equal((await self(app, user, other.key)).statusCode, 200, 'counted per key')
})

t.test('ENABLE_API_KEYS off: the routes are 404, a gh_ Bearer is just an invalid token, users have no kind', async (t) => {
  const app = await build(t)
  const on = await build(t, ON)
  const owner = await createUser(on)
  const { key } = await keyOf(on, owner)
  const user = await createUser(app, { roles: ['admin'] })
  const { access_token: token } = await login(app, user)
  for (const [method, url] of [['GET', '/api/auth/api-keys'], ['POST', '/api/auth/api-keys'], ['POST', '/api/service-accounts'], ['GET', `/api/users/${user.id}/api-keys`]] as const) {
    const res = await app.inject({ method, url, headers: authHeader(token), ...(method === 'POST' && { payload: { name: 'x' } }) })
    t.equal(res.statusCode, 404, `${method} ${url}`)
  }
  const res = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(key) })
  t.same([res.statusCode, res.json()], [401, INVALID])
  const shown = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(token) })
  t.notOk('kind' in shown.json(), 'UserResponse is as before')
  const filtered = await app.inject({ method: 'GET', url: '/api/users?kind=service', headers: authHeader(token) })
  t.equal(filtered.statusCode, 200, 'kind filters nothing while off, as any unknown query field')
  t.same(filtered.json().data.map((u: { id: string }) => u.id), [user.id])
})
