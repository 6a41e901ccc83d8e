import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { sql } from 'kysely'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, rawSql, tempDir, testConfig } from '../../../helper.js'

/*
 * The standby signing key (src/keys/key-states.ts, src/keys/key-service.ts) against jose's
 * createRemoteJWKSet with its defaults (a refetch on an unknown kid at most every 30 s), on a
 * gatehouse listening on 127.0.0.1: the verifier fetches the JWKS once, the current key is revoked,
 * and the next token is signed by a key the verifier already holds.
 */

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid

interface Listed { kid: string, state: string, created_at: string, activates_at: string | null, retires_at: string | null }

async function running (t: Test) {
  const dir = tempDir(t)
  const app = await build(t, { DATA_DIR: dir, JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const fetches: string[] = []
  app.server.on('request', (req: { url?: string }) => { if (req.url === '/.well-known/jwks.json') fetches.push(req.url) })
  const jwks = createRemoteJWKSet(new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/.well-known/jwks.json`))
  const verify = async (token: string) => await jwtVerify(token, jwks, { issuer: 'gatehouse', algorithms: ['ES256'], typ: 'at+jwt' })
  const user = await createUser(app)
  const superuser = await createUser(app, { isSuperuser: true })
  // a fresh token for each call: one signed by a revoked key is refused
  const root = async () => authHeader((await login(app, superuser)).access_token)
  const keys = async () => (await app.inject({ method: 'GET', url: '/api/keys', headers: await root() })).json().data as Listed[]
  const revoke = async (kid: string) => await app.inject({ method: 'DELETE', url: `/api/keys/${kid}`, headers: await root() })
  return { app, dir, user, verify, fetches, keys, revoke }
}

t.test('a standby key is published from the first start: a next key that signs only once promoted', async (t) => {
  const { app, keys } = await running(t)
  const [current, standby, ...rest] = await keys()
  t.same(rest, [])
  t.same([current?.state, current?.retires_at], ['current', null])
  t.same(standby, { kid: standby?.kid, alg: 'ES256', state: 'next', created_at: standby?.created_at, activates_at: null, retires_at: null })
  const jwks = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid)
  t.same(jwks, [current?.kid, standby?.kid], 'both are published')
})

t.test('revoking the current key promotes the standby: a jose verifier that fetched the JWKS once verifies the next token at once', async (t) => {
  const { user, verify, fetches, keys, revoke, app } = await running(t)
  const first = (await login(app, user)).access_token
  t.equal((await verify(first)).payload.sub, user.id)
  t.equal(fetches.length, 1, 'the verifier fetched the JWKS once')
  const [current, standby] = await keys()

  const revoked = await revoke(current?.kid ?? '')
  t.equal(revoked.statusCode, 204)
  const next = (await login(app, user)).access_token
  t.equal(kidOf(next), standby?.kid, 'the standby signs at once')
  const { payload, protectedHeader } = await verify(next)
  t.same([payload.sub, protectedHeader.kid], [user.id, standby?.kid], 'verified at once by the same key set')
  t.equal(fetches.length, 1, 'without fetching again')

  const after = await keys()
  t.same(after.map((k) => [k.kid, k.state]), [[current?.kid, 'revoked'], [standby?.kid, 'current'], [after[2]?.kid, 'next']], 'a new standby takes its place')
  t.same([after[1]?.activates_at !== null, after[2]?.activates_at, after[2]?.retires_at], [true, null, null])
})

t.test('negative control: without a standby, revoking the current key makes a key the verifier never saw sign, and jose refuses its tokens', async (t) => {
  const { user, verify, fetches, keys, revoke, app, dir } = await running(t)
  t.equal((await verify((await login(app, user)).access_token)).payload.sub, user.id)
  const [current, standby] = await keys()
  // as every deployment was before the standby: no next key when the current one is revoked
  await rawSql(testConfig(t, { DATA_DIR: dir }), sql`delete from signing_keys where kid = ${standby?.kid ?? ''}`)
  t.equal((await revoke(current?.kid ?? '')).statusCode, 204)
  const next = (await login(app, user)).access_token
  t.not(kidOf(next), standby?.kid)
  await t.rejects(verify(next), { code: 'ERR_JWKS_NO_MATCHING_KEY', message: 'no applicable key found in the JSON Web Key Set' })
  t.equal(fetches.length, 1, 'jose would not fetch again for 30 s')
})
