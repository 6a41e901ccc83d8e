import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { buildFrom, createUser, databaseEnv, login, authHeader, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { cli } from './cli-process.js'
import { main } from '../../src/cli/main.js'

/*
 * gatehouse oidc-client create|list|rotate-secret|delete (src/cli/oidc-client.ts) as a real process
 * on the database a running app uses: the app sees what the command made, the command's secret
 * authenticates in the app, and the clients of OIDC_CLIENTS_FILE are refused as by the API.
 */

const SETTINGS = {
  ENABLE_OIDC_PROVIDER: 'true',
  ENABLE_PORTAL: 'true',
  PUBLIC_URL: 'http://localhost:3000',
  JWT_ALG: 'ES256',
  DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`
}
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

t.test('create, list, rotate-secret and delete, in text and --json; the app sees each at once', async (t) => {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ...SETTINGS }
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...SETTINGS }))
  const oidc = app.services.oidc
  if (oidc === undefined) throw new Error('the provider is on')

  const created = await cli(['oidc-client', 'create', '--name', 'Grafana', '--client-id', 'grafana', '--redirect-uri', 'https://grafana.example.com/cb',
    '--redirect-uri', 'http://localhost:3001/cb', '--scope', 'openid', '--scope', 'roles', '--grant', 'authorization_code', '--grant', 'client_credentials',
    '--role', 'reporter', '--allowed-role', 'staff', '--require-aal2', '--skip-consent', '--post-logout-redirect-uri', 'https://grafana.example.com/bye'], env)
  t.equal(created.code, 0, created.stderr)
  const secret = /^created client grafana\nclient_secret: ([A-Za-z0-9_-]{43})\n\(shown this once: store it now\)\n$/.exec(created.stdout)?.[1]
  t.ok(secret, created.stdout)
  t.equal((await oidc.clients.authenticate({ authorization: basic('grafana', secret ?? ''), body: {} }, { ip: '127.0.0.1' })).clientId, 'grafana', 'the printed secret authenticates in the app')
  const stored = await oidc.admin.get('grafana')
  t.match(stored, {
    name: 'Grafana',
    type: 'confidential',
    tokenEndpointAuthMethod: 'client_secret_basic',
    redirectUris: ['https://grafana.example.com/cb', 'http://localhost:3001/cb'],
    postLogoutRedirectUris: ['https://grafana.example.com/bye'],
    scopes: ['openid', 'roles'],
    grantTypes: ['authorization_code', 'client_credentials'],
    roles: ['reporter'],
    allowedRoles: ['staff'],
    requireAal2: true,
    skipConsent: true,
    readOnly: false
  })

  const spa = await cli(['oidc-client', 'create', '--name', 'SPA', '--public', '--redirect-uri', 'https://spa.example.com/cb', '--json'], env)
  t.equal(spa.code, 0, spa.stderr)
  const spaBody = JSON.parse(spa.stdout) as Record<string, unknown>
  t.match(spaBody, { type: 'public', token_endpoint_auth_method: 'none', read_only: false })
  t.notOk('client_secret' in spaBody)

  const listed = await cli(['oidc-client', 'list'], env)
  t.equal(listed.code, 0, listed.stderr)
  t.equal(listed.stdout, `grafana  Grafana  (confidential)  https://grafana.example.com/cb http://localhost:3001/cb\n${String(spaBody.client_id)}  SPA  (public)  https://spa.example.com/cb\n`)
  const listedJson = await cli(['oidc-client', 'list', '--json'], env)
  t.strictSame((JSON.parse(listedJson.stdout) as { data: Array<{ client_id: string }> }).data.map((c) => c.client_id), ['grafana', spaBody.client_id])

  const rotated = await cli(['oidc-client', 'rotate-secret', 'grafana', '--json'], env)
  t.equal(rotated.code, 0, rotated.stderr)
  const fresh = (JSON.parse(rotated.stdout) as { client_secret: string }).client_secret
  t.not(fresh, secret)
  await t.rejects(oidc.clients.authenticate({ authorization: basic('grafana', secret ?? ''), body: {} }, { ip: '127.0.0.1' }), { name: 'Error', message: 'Client authentication failed' }, 'the old secret is refused at once')
  t.equal((await oidc.clients.authenticate({ authorization: basic('grafana', fresh), body: {} }, { ip: '127.0.0.1' })).clientId, 'grafana')

  const deleted = await cli(['oidc-client', 'delete', 'grafana'], env)
  t.equal(deleted.code, 0, deleted.stderr)
  t.equal(deleted.stdout, 'deleted client grafana\n')
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal(await oidc.clients.find('grafana'), undefined, 'gone for the app within its cache time')
  const again = await cli(['oidc-client', 'delete', 'grafana'], env)
  t.strictSame([again.code, again.stderr], [1, 'gatehouse: Client not found\n'])

  // the CLI's events are in the same trail, from the address `cli`
  const admin = await createUser(app, { isSuperuser: true })
  const headers = authHeader((await login(app, admin)).access_token)
  const audit = await app.inject({ method: 'GET', url: '/api/audit?per_page=100', headers })
  const events = (audit.json() as { data: Array<{ event: string, address: string, detail: string }> }).data.filter((e) => e.event.startsWith('oidc_'))
  t.strictSame(events.map((e) => [e.event, e.address, e.detail]), [
    ['oidc_client_deleted', 'cli', 'grafana'],
    ['oidc_client_secret_rotated', 'cli', 'grafana'],
    ['oidc_client_created', 'cli', String(spaBody.client_id)],
    ['oidc_client_created', 'cli', 'grafana']
  ])
})

t.test('bad arguments: exit 2 for usage, 1 naming each broken rule; nothing is created', async (t) => {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ...SETTINGS }
  const missing = await cli(['oidc-client', 'create', '--name', 'X'], env)
  t.equal(missing.code, 2)
  t.match(missing.stderr, /^gatehouse: --redirect-uri is required\nusage: gatehouse oidc-client create/)
  const http = await cli(['oidc-client', 'create', '--name', 'X', '--redirect-uri', 'http://x.example/cb'], env)
  t.strictSame([http.code, http.stderr], [1, 'gatehouse: The redirect_uris field must be https (http only on a loopback address or localhost): http://x.example/cb\n'])
  const scope = await cli(['oidc-client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb', '--scope', 'admin', '--client-id', 'A'], env)
  t.equal(scope.code, 1)
  t.match(scope.stderr, /^gatehouse: .*client_id.*; .*scopes/)
  const publicCc = await cli(['oidc-client', 'create', '--name', 'X', '--public', '--redirect-uri', 'https://x.example/cb', '--grant', 'client_credentials'], env)
  t.strictSame([publicCc.code, publicCc.stderr], [1, 'gatehouse: The grant_types field may include client_credentials only for a confidential client\n'])
  const listed = await cli(['oidc-client', 'list'], env)
  t.strictSame([listed.code, listed.stdout], [0, 'no clients\n'])
  const off = await cli(['oidc-client', 'list'], { ...await databaseEnv(t, tempDir(t)), JWT_SECRET: TEST_SECRET })
  t.strictSame([off.code, off.stderr], [1, 'gatehouse: the OpenID Connect provider is off: set ENABLE_OIDC_PROVIDER=true (docs/oidc.md)\n'])
})

t.test('the clients of OIDC_CLIENTS_FILE: listed as read-only, every change refused with client_read_only', async (t) => {
  const dataDir = tempDir(t)
  const file = join(dataDir, 'clients.json')
  writeFileSync(file, JSON.stringify([{ client_id: 'gitea', name: 'Gitea', type: 'confidential', redirect_uris: ['https://git.example.com/cb'], client_secret_env: 'GITEA_SECRET' }]))
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ...SETTINGS, OIDC_CLIENTS_FILE: file, GITEA_SECRET: 'g'.repeat(40) }
  const listed = await cli(['oidc-client', 'list'], env)
  t.strictSame([listed.code, listed.stdout], [0, 'gitea  Gitea  (confidential, read-only (OIDC_CLIENTS_FILE))  https://git.example.com/cb\n'])
  for (const args of [['rotate-secret', 'gitea'], ['delete', 'gitea'], ['create', '--name', 'G', '--client-id', 'gitea', '--redirect-uri', 'https://git.example.com/cb']]) {
    const run = await cli(['oidc-client', ...args], env)
    t.strictSame([run.code, run.stderr], [1, 'gatehouse: The client is defined in OIDC_CLIENTS_FILE and changes only there\n'], args.join(' '))
  }
  const unset = await cli(['oidc-client', 'list'], { ...env, GITEA_SECRET: '' })
  t.equal(unset.code, 1)
  t.match(unset.stderr, /^gatehouse: Invalid configuration: OIDC_CLIENTS_FILE \S+ \[0\] \(gitea\): the secret in GITEA_SECRET must be set, 32 to 1024 characters\n$/)
})

t.test('--help on each command prints its usage and exits 0; the group lists in gatehouse --help', async (t) => {
  const run = async (args: string[]) => {
    let stdout = ''
    let stderr = ''
    const code = await main(args, { out: (text) => { stdout += text }, err: (text) => { stderr += text } })
    return { code, stdout, stderr }
  }
  for (const name of ['create', 'list', 'rotate-secret', 'delete']) {
    const help = await run(['oidc-client', name, '--help'])
    t.equal(help.code, 0, name)
    t.match(help.stdout, new RegExp(`^usage: gatehouse oidc-client ${name}`), name)
    t.equal(help.stderr, '')
  }
  t.match((await run(['--help'])).stdout, /gatehouse oidc-client create --name <n> --redirect-uri <u>\.\.\. \[--post-logout-redirect-uri <u>\]\.\.\. \[--public\]/)
  const missing = await run(['oidc-client', 'delete'])
  t.strictSame(missing, { code: 2, stdout: '', stderr: 'gatehouse: missing <client_id>\nusage: gatehouse oidc-client delete <client_id>\n' })
})
