import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError } from '../../../../src/errors.js'
import { buildFrom, tempDir, testConfig } from '../../../helper.js'
import { buildApp } from '../../../../src/app.js'
import { createClient, OIDC, oidcApp } from '../oidc-support.js'

/* The clients of OIDC_CLIENTS_FILE through /api/oauth2/clients (routes/api/oauth2-clients.ts, src/oidc/clients.ts): shown, never changed. */

const FIXED = { client_id: 'grafana', name: 'Grafana', type: 'confidential', redirect_uris: ['https://grafana.example.com/cb'], client_secret_env: 'GATEHOUSE_TEST_FILE_SECRET' }

function fileOf (t: Test, clients: unknown[]): string {
  process.env.GATEHOUSE_TEST_FILE_SECRET = 'f'.repeat(40)
  t.teardown(() => { delete process.env.GATEHOUSE_TEST_FILE_SECRET })
  const file = join(tempDir(t), 'clients.json')
  writeFileSync(file, JSON.stringify(clients))
  return file
}

t.test('the file\'s clients are listed first, read_only, without times; every change is 409 client_read_only', async (t) => {
  const env = await oidcApp(t, { OIDC_CLIENTS_FILE: fileOf(t, [FIXED]) })
  t.equal((await createClient(env, { client_id: 'web-app', name: 'Web', type: 'public', redirect_uris: ['https://web.example/cb'] })).statusCode, 201)
  const list = await env.app.inject({ method: 'GET', url: '/api/oauth2/clients', headers: env.admin })
  const data = (list.json() as { data: Array<Record<string, unknown>> }).data
  t.strictSame(data.map((c) => [c.client_id, c.read_only]), [['grafana', true], ['web-app', false]])
  t.strictSame(data[0], {
    client_id: 'grafana',
    name: 'Grafana',
    type: 'confidential',
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: ['https://grafana.example.com/cb'],
    post_logout_redirect_uris: [],
    web_origins: [],
    scopes: ['openid', 'profile', 'email'],
    allowed_roles: [],
    require_aal2: false,
    skip_consent: false,
    grant_types: ['authorization_code'],
    roles: [],
    access_token_ttl: 900,
    disabled: false,
    read_only: true,
    created_at: null,
    updated_at: null
  })
  t.notOk(list.body.includes('f'.repeat(40)), 'never the secret')
  const one = await env.app.inject({ method: 'GET', url: '/api/oauth2/clients/grafana', headers: env.admin })
  t.strictSame(one.json(), data[0])

  const readOnly = { error: 'Conflict', code: 'client_read_only', message: 'The client is defined in OIDC_CLIENTS_FILE and changes only there' }
  const attempts = [
    ['PATCH', '/api/oauth2/clients/grafana', { name: 'Changed' }],
    ['DELETE', '/api/oauth2/clients/grafana', undefined],
    ['POST', '/api/oauth2/clients/grafana/rotate-secret', undefined],
    ['POST', '/api/oauth2/clients', { ...FIXED, client_secret_env: undefined }]
  ] as const
  for (const [method, url, payload] of attempts) {
    const res = await env.app.inject({ method, url, headers: env.admin, ...(payload !== undefined && { payload }) })
    t.equal(res.statusCode, 409, `${method} ${url}`)
    t.strictSame(res.json(), readOnly, `${method} ${url}`)
  }
  t.strictSame((await env.app.inject({ method: 'GET', url: '/api/oauth2/clients/grafana', headers: env.admin })).json(), data[0], 'unchanged')
  t.equal((await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: { name: 'Changed' } })).statusCode, 200, 'control: a database client changes')
})

t.test('a client_id both in the file and in the database stops the start, naming OIDC_CLIENTS_FILE', async (t) => {
  const dataDir = tempDir(t)
  const env = await oidcApp(t, { DATA_DIR: dataDir })
  t.equal((await createClient(env, { ...FIXED, client_secret_env: undefined })).statusCode, 201)
  await env.app.close()
  const config = testConfig(t, { ...OIDC, DATA_DIR: dataDir, OIDC_CLIENTS_FILE: fileOf(t, [FIXED]) })
  const err = await buildApp(config).then(async (app) => { await app.close(); return undefined }, (e: unknown) => e)
  t.type(err, ConfigError)
  t.equal((err as Error).message, 'Invalid configuration: OIDC_CLIENTS_FILE names client_id grafana, which the database also holds: remove one of them (`gatehouse oidc-client delete grafana` with the file unset removes the database\'s)')
  const other = testConfig(t, { ...OIDC, DATA_DIR: dataDir, OIDC_CLIENTS_FILE: fileOf(t, [{ ...FIXED, client_id: 'grafana-2' }]) })
  const app = await buildFrom(t, other)
  t.equal((await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).statusCode, 200, 'control: another id starts')
})
