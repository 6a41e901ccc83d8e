import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import * as oidc from 'openid-client'
import t, { type Test } from 'tap'
import { PASSWORD, tempDir, TEST_SECRET } from '../helper.js'
import { startServer } from '../process/server-process.js'
import { freePort, TEST_REDIS_URL, uniquePrefix } from '../redis/helper.js'
import { HttpBrowser } from './browser.js'
import { OIDC_ALG, authorizationRequest, authorizeThrough } from './support.js'
import { freshSchema } from '../process/instances.js'

/*
 * Two real server processes (src/server.ts) on one PostgreSQL schema and one Redis, one issuer
 * (PUBLIC_URL, as behind one load balancer) and one clients file (OIDC_CLIENTS_FILE): the
 * authorization on A, the code redeemed on B, the tokens good on both; a revocation on A
 * (routes/oauth2/revoke) refused by B within a second (§3's broadcast carries child sessions too).
 */

const CALLBACK = 'http://127.0.0.1:9/callback'
const SCOPE = 'openid email offline_access'
const SECRET = 's'.repeat(43)

/** One instance on `port`, stopped at teardown; resolves once /health answers 200. */
async function instance (t: Test, port: number, env: Record<string, string>): Promise<string> {
  const server = startServer({ ...env, PORT: String(port) })
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    await server.exited
  })
  const origin = `http://127.0.0.1:${port}`
  for (let waited = 0; ; waited += 100) {
    if (server.child.exitCode !== null) throw new Error(`exited: ${server.stderr()}${server.stdout()}`)
    if (waited > 30_000) throw new Error(`no answer on ${port}: ${server.stderr()}`)
    const health = await fetch(`${origin}/health`).then((res) => res.status, () => 0)
    if (health === 200) return origin
    await sleep(100)
  }
}

/** openid-client's configuration of the client, every endpoint on `origin` (one instance) under the shared issuer. */
function configOn (discovered: oidc.Configuration, issuer: string, origin: string): oidc.Configuration {
  const meta = Object.fromEntries(Object.entries(discovered.serverMetadata()).map(([key, value]) =>
    [key, typeof value === 'string' && key.endsWith('_endpoint') ? value.replace(issuer, origin) : value]))
  const config = new oidc.Configuration({ ...meta, issuer }, 'app', SECRET, oidc.ClientSecretBasic(SECRET))
  oidc.allowInsecureRequests(config)
  return config
}

t.test('authorize on A, redeem on B; a revocation on A is refused by B within a second', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'secret'), SECRET)
  writeFileSync(join(dir, 'clients.json'), JSON.stringify([{
    client_id: 'app',
    name: 'The app',
    type: 'confidential',
    redirect_uris: [CALLBACK],
    scopes: ['openid', 'email', 'offline_access'],
    grant_types: ['authorization_code', 'refresh_token'],
    client_secret_file: join(dir, 'secret')
  }]))
  const [portA, portB] = [await freePort(), await freePort()]
  const issuer = `http://127.0.0.1:${portA}`
  const env = {
    JWT_SECRET: TEST_SECRET,
    JWT_ALG: OIDC_ALG,
    DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    DATA_DIR: dir,
    DATABASE_URL: await freshSchema(t),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: uniquePrefix(t),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ENABLE_REGISTER: 'true',
    ENABLE_PORTAL: 'true',
    ENABLE_OIDC_PROVIDER: 'true',
    OIDC_CLIENTS_FILE: join(dir, 'clients.json'),
    PUBLIC_URL: issuer,
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1'
  }
  const a = await instance(t, portA, env)
  const b = await instance(t, portB, env)
  const email = `oidc-${process.pid}@example.com`
  const registered = await fetch(`${a}/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD, name: 'Oidc User' }) })
  t.equal(registered.status, 201)
  const userId = ((await registered.json()) as { user: { id: string } }).user.id

  const discovered = await oidc.discovery(new URL(issuer), 'app', SECRET, oidc.ClientSecretBasic(SECRET), { execute: [oidc.allowInsecureRequests] })
  const [onA, onB] = [configOn(discovered, issuer, a), configOn(discovered, issuer, b)]
  const request = await authorizationRequest(onA, CALLBACK, SCOPE)
  const { callback } = await authorizeThrough(new HttpBrowser(), request.url, { email, password: PASSWORD }, { redirectUri: CALLBACK })
  const tokens = await oidc.authorizationCodeGrant(onB, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
  t.match(tokens.claims(), { iss: issuer, sub: userId, aud: 'app', email }, 'B answered the code A issued; the ID token verifies through the JWKS')
  t.match(await oidc.fetchUserInfo(onA, tokens.access_token, userId), { sub: userId, email }, 'A accepts B\'s access token')
  t.match(await oidc.fetchUserInfo(onB, tokens.access_token, userId), { sub: userId, email })

  await oidc.tokenRevocation(onA, tokens.access_token)
  const started = Date.now()
  for (;;) {
    const refused = await oidc.fetchUserInfo(onB, tokens.access_token, userId).then(() => undefined, (err: unknown) => err)
    if (refused !== undefined) {
      t.match(refused, { status: 401 }, `B refuses it after ${Date.now() - started} ms`)
      t.ok(Date.now() - started < 1000, 'within a second')
      break
    }
    if (Date.now() - started >= 1000) {
      t.fail('B still accepts the revoked token after a second')
      break
    }
    await sleep(20)
  }
  const refreshed = await oidc.refreshTokenGrant(onB, tokens.refresh_token ?? '').then(() => 'refreshed', (err: unknown) => err)
  t.match(refreshed, { error: 'invalid_grant' }, 'nor does B refresh the ended child session')
})
