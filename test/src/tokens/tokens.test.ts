// Proves src/tokens/codec.ts and src/tokens/issuer.ts.
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { TokenExpired } from '../../../src/errors.js'
import { createTokenCodec } from '../../../src/tokens/codec.js'
import { TokenIssuer } from '../../../src/tokens/issuer.js'
import { type Claims } from '../../../src/tokens/claims.js'
import { authHeader, build, createUser, login, TEST_SECRET } from '../../helper.js'
import { EXPIRED, JWT } from '../../patterns.js'

/*
 * Every forged token starts from the claims of a real login's access token and changes one
 * thing, signed here with node:crypto, so each test proves exactly one rule of docs/api.md#tokens-and-claims /
 * RFC 8725. The first test shows that the forging itself is sound: unchanged, it passes.
 */

const HS256 = { alg: 'HS256', typ: 'at+jwt' }

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

function hmac (input: string, secret = TEST_SECRET, hash = 'sha256'): string {
  return createHmac(hash, secret).update(input).digest('base64url')
}

/** header.payload signed with HMAC (HS256 with the real secret unless told otherwise). */
function forge (payload: Record<string, unknown>, header: Record<string, unknown> = HS256, sign: (input: string) => string = hmac): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${sign(input)}`
}

function claimsOf (token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Claims
}

function without (claims: Claims, name: keyof Claims): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...claims }
  delete copy[name]
  return copy
}

interface Signed { app: FastifyInstance, id: string, email: string, access: string, refresh: string, claims: Claims }

async function signedIn (t: Test, values: Record<string, unknown> = {}): Promise<Signed> {
  const app = await build(t, values)
  const user = await createUser(app)
  const { access_token: access, refresh_token: refresh } = await login(app, user)
  return { app, id: user.id, email: user.email, access, refresh, claims: claimsOf(access) }
}

/** The two ways a request can present an access token to a protected route. */
function protectedRoutes (s: Signed): string[] {
  return ['/auth/me', `/api/users/${s.id}`]
}

async function get (app: FastifyInstance, url: string, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url, headers })
}

const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }

function challenge (message: string): string {
  return `Bearer realm="gatehouse", error="invalid_token", error_description="${message}"`
}

function assertRefused (t: Test, res: LightMyRequestResponse, body: typeof INVALID, url: string): void {
  t.equal(res.statusCode, 401, `${url} status`)
  // RFC 6750 §3.1: a request with no credential gets the bare challenge, no error code
  const expected = body.code === 'token_missing' ? 'Bearer realm="gatehouse"' : challenge(body.message)
  t.equal(res.headers['www-authenticate'], expected, `${url} WWW-Authenticate`)
  t.same(res.json(), body, `${url} body`)
}

async function assertRefusedEverywhere (t: Test, s: Signed, headers: Record<string, string>, body = INVALID): Promise<void> {
  for (const url of protectedRoutes(s)) assertRefused(t, await get(s.app, url, headers), body, url)
}

t.test('a token forged here from a real login\'s claims is the real token byte for byte, and a re-signed change is accepted', async (t) => {
  const s = await signedIn(t)
  t.equal(forge({ ...s.claims }), s.access)
  // re-signed with the real key, a changed claim passes: so each refusal below is the one rule it changes
  const reissued = forge({ ...s.claims, jti: '00000000-0000-4000-8000-000000000000' })
  for (const url of protectedRoutes(s)) {
    const res = await get(s.app, url, authHeader(reissued))
    t.equal(res.statusCode, 200, url)
    t.equal(res.json().id, s.id, url)
  }
  const other = await createUser(s.app)
  const asAdmin = await get(s.app, `/api/users/${other.id}`, authHeader(forge({ ...s.claims, roles: ['admin'] })))
  t.equal(asAdmin.statusCode, 200)
  t.equal(asAdmin.json().id, other.id)
})

t.test('the access token of a login has the documented claims', async (t) => {
  const s = await signedIn(t)
  t.match(s.access, JWT)
  const header = JSON.parse(Buffer.from(s.access.split('.')[0] ?? '', 'base64url').toString('utf8'))
  t.same(header, { alg: 'HS256', typ: 'at+jwt' })
  const { iat, exp, jti, session_id: sessionId, ...rest } = s.claims
  t.same(rest, { user_id: s.id, email: s.email, roles: ['user'], is_superuser: false, type: 'access', sub: s.id, iss: 'gatehouse', aal: 'aal1', amr: ['pwd'], auth_time: iat })
  t.equal(exp - iat, 15 * 60)
  t.match(jti, /^[0-9a-f-]{36}$/)
  t.match(sessionId, /^[0-9a-f-]{36}$/)
})

t.test('a token with alg "none" and an empty signature is refused as invalid', async (t) => {
  const s = await signedIn(t)
  const unsigned = forge({ ...s.claims }, { alg: 'none', typ: 'JWT' }, () => '')
  t.match(unsigned, /^[\w-]+\.[\w-]+\.$/)
  await assertRefusedEverywhere(t, s, authHeader(unsigned))
})

t.test('a token signed HS512 with the real secret is refused: the algorithm is pinned to HS256', async (t) => {
  const s = await signedIn(t)
  const hs512 = forge({ ...s.claims }, { alg: 'HS512', typ: 'JWT' }, (input) => hmac(input, TEST_SECRET, 'sha512'))
  await assertRefusedEverywhere(t, s, authHeader(hs512))
})

t.test('a header claiming RS256 over an HMAC signature with the real secret is refused', async (t) => {
  const s = await signedIn(t)
  const confused = forge({ ...s.claims }, { alg: 'RS256', typ: 'JWT' })
  await assertRefusedEverywhere(t, s, authHeader(confused))
})

t.test('a payload tampered to add the admin role, with the original signature kept, is refused', async (t) => {
  const s = await signedIn(t)
  const [header, , signature] = s.access.split('.')
  const tampered = `${header}.${b64({ ...s.claims, roles: ['admin'] })}.${signature}`
  await assertRefusedEverywhere(t, s, authHeader(tampered))
  // the tampered token would have opened another user's record had it been accepted
  const other = await createUser(s.app)
  const res = await get(s.app, `/api/users/${other.id}`, authHeader(tampered))
  assertRefused(t, res, INVALID, 'another user')
})

t.test('a token from another issuer, signed with the real secret, is refused', async (t) => {
  const s = await signedIn(t)
  await assertRefusedEverywhere(t, s, authHeader(forge({ ...s.claims, iss: 'someone-else' })))
})

t.test('a token without exp, signed with the real secret, is refused', async (t) => {
  const s = await signedIn(t)
  await assertRefusedEverywhere(t, s, authHeader(forge(without(s.claims, 'exp'))))
})

t.test('a token without type, signed with the real secret, is refused', async (t) => {
  const s = await signedIn(t)
  await assertRefusedEverywhere(t, s, authHeader(forge(without(s.claims, 'type'))))
})

t.test('a token signed with another secret is refused', async (t) => {
  const s = await signedIn(t)
  const other = forge({ ...s.claims }, HS256, (input) => hmac(input, 'another-secret-that-is-also-32-bytes-long'))
  await assertRefusedEverywhere(t, s, authHeader(other))
})

t.test('a malformed token is refused as invalid', async (t) => {
  const s = await signedIn(t)
  for (const token of ['not-a-jwt', 'a.b.c', `${s.access}.extra`, s.access.slice(0, -1) + '!']) {
    await assertRefusedEverywhere(t, s, authHeader(token))
  }
})

t.test('a Bearer scheme with no token after it is refused as missing (token_missing)', async (t) => {
  const s = await signedIn(t)
  for (const authorization of ['Bearer', 'Bearer ', 'Bearer    ']) {
    await assertRefusedEverywhere(t, s, { authorization }, MISSING)
  }
})

t.test('the Bearer scheme is matched case-insensitively (RFC 7235)', async (t) => {
  const s = await signedIn(t)
  for (const scheme of ['bearer', 'BEARER']) {
    for (const url of protectedRoutes(s)) {
      const res = await get(s.app, url, { authorization: `${scheme} ${s.access}` })
      t.equal(res.statusCode, 200, `${scheme} ${url}`)
      t.equal(res.json().id, s.id)
    }
  }
})

t.test('an access token is refused as expired once its exp has passed', async (t) => {
  // a 2 s lifetime: exp is whole seconds, so the token is alive for at least 1 s after login
  const s = await signedIn(t, { ACCESS_TOKEN_TTL: '2s', REFRESH_TOKEN_TTL: '3s' })
  for (const url of protectedRoutes(s)) {
    t.equal((await get(s.app, url, authHeader(s.access))).statusCode, 200, `${url} before exp`)
  }
  await sleep(Math.max(0, s.claims.exp * 1000 - Date.now()))
  // verified (and cached) before, refused now: the cache never outlives exp
  await assertRefusedEverywhere(t, s, authHeader(s.access), EXPIRED)
})

t.test('a token is refused as expired from the second its exp is reached', async (t) => {
  const s = await signedIn(t)
  const atExp = forge({ ...s.claims, exp: Math.floor(Date.now() / 1000) })
  await assertRefusedEverywhere(t, s, authHeader(atExp), EXPIRED)
})

t.test('TokenIssuer.verify refuses a token in the millisecond its exp is reached and accepts it one before', async (t) => {
  const s = await signedIn(t)
  const issuer = new TokenIssuer(createTokenCodec(TEST_SECRET, 'gatehouse'), { issuer: 'gatehouse', accessTtl: 900, refreshTtl: 3600 })
  const exp = Math.floor(Date.now() / 1000) + 60
  const token = forge({ ...s.claims, exp })
  t.same(issuer.verify(token, 'access', exp * 1000 - 1), { ...s.claims, exp })
  t.throws(() => issuer.verify(token, 'access', exp * 1000), TokenExpired)
  t.throws(() => issuer.verify(token, 'access', exp * 1000 + 1), TokenExpired)
})

t.test('a refresh token presented as an access token is refused as invalid', async (t) => {
  const s = await signedIn(t)
  t.equal(claimsOf(s.refresh).type, 'refresh')
  await assertRefusedEverywhere(t, s, authHeader(s.refresh))
})

t.test('an access token presented to POST /auth/refresh is refused as invalid', async (t) => {
  const s = await signedIn(t)
  const res = await s.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.access } })
  assertRefused(t, res, INVALID, '/auth/refresh')
  // and the real refresh token still works: the access token spent nothing
  const ok = await s.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: s.refresh } })
  t.equal(ok.statusCode, 200)
})
