import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { databaseEnv, tempDir, TEST_SECRET } from '../helper.js'
import { cli } from './cli-process.js'
import { startServer } from './server-process.js'

/*
 * The real server's start with ENABLE_OIDC_PROVIDER (src/config/oidc.ts, src/oidc/clients.ts): a
 * refused setting, a bad OIDC_CLIENTS_FILE and a client_id both in the file and the database each
 * stop it with one line naming the setting; the good file starts and serves discovery.
 */

const BASE = {
  JWT_SECRET: TEST_SECRET,
  ENABLE_OIDC_PROVIDER: 'true',
  ENABLE_PORTAL: 'true',
  PUBLIC_URL: 'http://localhost:3000',
  JWT_ALG: 'ES256',
  DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  PORT: '0',
  HOST: '127.0.0.1'
}

async function refusal (t: Test, env: Record<string, string>): Promise<string> {
  const server = startServer(env)
  t.teardown(() => { server.child.kill('SIGKILL') })
  const exit = await server.exited
  t.equal(exit.code, 1)
  return server.stderr()
}

t.test('each refusal is one line naming the setting; the same settings set right start and serve discovery', async (t) => {
  const dir = tempDir(t)
  const env = { ...await databaseEnv(t, dir), ...BASE }
  t.equal(await refusal(t, { ...env, JWT_ALG: 'HS256' }), 'gatehouse: Invalid configuration: ENABLE_OIDC_PROVIDER=true needs an asymmetric JWT_ALG (ES256, EdDSA or RS256): relying parties verify ID tokens with the published keys\n')
  const file = join(dir, 'clients.json')
  writeFileSync(file, '[{"client_id": "wiki", "name": "Wiki", "type": "confidential"}]')
  t.match(await refusal(t, { ...env, OIDC_CLIENTS_FILE: file }), /^gatehouse: Invalid configuration: OIDC_CLIENTS_FILE \S+clients.json \[0\] redirect_uris: Expected required property\n$/)

  writeFileSync(file, JSON.stringify([{ client_id: 'wiki', name: 'Wiki', type: 'confidential', redirect_uris: ['https://wiki.example/cb'], client_secret_env: 'WIKI_SECRET' }]))
  const created = await cli(['oidc-client', 'create', '--name', 'Wiki', '--client-id', 'wiki', '--redirect-uri', 'https://wiki.example/cb'], env)
  t.equal(created.code, 0, created.stderr)
  t.equal(await refusal(t, { ...env, OIDC_CLIENTS_FILE: file, WIKI_SECRET: 'w'.repeat(40) }),
    'gatehouse: Invalid configuration: OIDC_CLIENTS_FILE names client_id wiki, which the database also holds: remove one of them (`gatehouse oidc-client delete wiki` with the file unset removes the database\'s)\n')

  t.equal((await cli(['oidc-client', 'delete', 'wiki'], env)).code, 0)
  const server = startServer({ ...env, OIDC_CLIENTS_FILE: file, WIKI_SECRET: 'w'.repeat(40) })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const origin = (await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1] ?? ''
  const res = await fetch(`${origin}/.well-known/openid-configuration`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('cache-control'), 'public, max-age=600')
  t.match(await res.json(), { issuer: 'http://localhost:3000', id_token_signing_alg_values_supported: ['ES256'] })
  server.child.kill('SIGTERM')
  await server.exited
})
