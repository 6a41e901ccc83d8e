import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import t, { type Test } from 'tap'
import { authHeader, buildFrom, createUser, login, testConfig } from '../../../helper.js'

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid

interface Run { oldAfterSwitch: { status: number, verifier: string } | undefined, failures: string[], verifiedNew: number, oldToken: string, oldKid: string, standbyKid: string, newKid: string, app: Awaited<ReturnType<typeof buildFrom>>, retiresAt: string, verify: (token: string) => Promise<unknown> }

/**
 * A verifier that honours the JWKS max-age (cacheMaxAge 2 s, as JWKS_MAX_AGE) and cannot refetch on a
 * kid it does not know (a cooldown of an hour): it holds a new key only if the key was published at
 * least a max-age before it signs. Fresh tokens are verified every 100 ms across a rotation. The times
 * are scaled down: the lead is set on the configuration past its 30 s minimum (src/config/keys.ts).
 */
async function rotateUnderVerifier (t: Test, lead: number): Promise<Run> {
  const app = await buildFrom(t, { ...testConfig(t, { JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS, JWKS_MAX_AGE: '2', ACCESS_TOKEN_TTL: '4' }), jwtKeyPublishLead: lead })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const jwks = createRemoteJWKSet(new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/.well-known/jwks.json`), { cacheMaxAge: 2000, cooldownDuration: 3_600_000 })
  const verify = async (token: string) => await jwtVerify(token, jwks, { issuer: 'gatehouse', algorithms: ['ES256'], typ: 'at+jwt' })
  const user = await createUser(app)
  const superuser = await createUser(app, { isSuperuser: true })
  // tokens live 4 s here: a fresh one for each call
  const root = async () => authHeader((await login(app, superuser)).access_token)
  const first = (await login(app, user)).access_token
  await verify(first)
  const rotated = await app.inject({ method: 'POST', url: '/api/keys/rotate', headers: await root() })
  const next = rotated.json() as { kid: string, activates_at: string }
  const failures: string[] = []
  let verifiedNew = 0
  let oldToken = first
  let oldAfterSwitch: Run['oldAfterSwitch']
  const until = Date.parse(next.activates_at) + 1500
  while (Date.now() < until) {
    const token = (await login(app, user)).access_token
    if (kidOf(token) !== next.kid) {
      oldToken = token
    } else if (verifiedNew++ === 0) {
      // the first token of the new key: the last one of the old key still passes gatehouse and the verifier
      const status = (await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(oldToken) })).statusCode
      oldAfterSwitch = { status, verifier: await verify(oldToken).then(() => 'verified', (err: Error) => err.message) }
    }
    try {
      await verify(token)
    } catch (err) {
      failures.push(`${kidOf(token)}: ${(err as Error).message}`)
    }
    await sleep(100)
  }
  const [oldEntry, standby] = (await app.inject({ method: 'GET', url: '/api/keys', headers: await root() })).json().data as Array<{ kid: string, retires_at: string }>
  return { oldAfterSwitch, failures, verifiedNew, oldToken, oldKid: kidOf(first), standbyKid: standby?.kid ?? '', newKid: next.kid, app, retiresAt: oldEntry?.retires_at ?? '', verify }
}

t.test('a rotation with a publish lead of one JWKS max-age or more fails no verification; old-kid tokens verify until their key is gone', async (t) => {
  const run = await rotateUnderVerifier(t, 3)
  t.same(run.failures, [], 'no token failed at the verifier')
  t.ok(run.verifiedNew > 0, 'tokens of the new key were verified')
  t.equal(kidOf(run.oldToken), run.oldKid)
  t.same(run.oldAfterSwitch, { status: 200, verifier: 'verified' }, 'the old key\'s last token still passes after the switch')
  const jwks = async () => (await run.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid)
  t.same(await jwks(), [run.oldKid, run.standbyKid, run.newKid], 'the previous key stays published')
  await sleep(Math.max(0, Date.parse(run.retiresAt) - Date.now() + 100))
  t.same(await jwks(), [run.standbyKid, run.newKid], 'gone once its tokens have expired and every cached key set has let it go')
})

t.test('negative control: the same verifier across a rotation with no publish lead fails the new key\'s first tokens', async (t) => {
  const run = await rotateUnderVerifier(t, 0)
  t.ok(run.failures.length > 0, `the verifier failed ${run.failures.length} token(s)`)
  t.match(run.failures[0], new RegExp(`^${run.newKid}: no applicable key found in the JSON Web Key Set`))
})
