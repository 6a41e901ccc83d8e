import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { tempDir } from '../../helper.js'
import { errorOf, load } from './support.js'

/* The provider's settings (src/config/oidc.ts, src/config/oidc-client-rules.ts): its refusals, and the clients file read at start. */

const DATA_KEY = `k1:${Buffer.alloc(32, 7).toString('base64')}`
const ON = { ENABLE_OIDC_PROVIDER: true, ENABLE_PORTAL: true, PUBLIC_URL: 'https://auth.example.com', JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: DATA_KEY }
const CLIENT = { client_id: 'grafana', name: 'Grafana', type: 'confidential', redirect_uris: ['https://grafana.example.com/login/generic_oauth'] }
const SECRET = 's'.repeat(40)

function clientsFile (t: Test, content: unknown): string {
  const file = join(tempDir(t), 'clients.json')
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

function secretFile (t: Test, content: string): string {
  const file = join(tempDir(t), 'secret')
  writeFileSync(file, content)
  return file
}

t.test('off by default: no provider, and everything else as before', async (t) => {
  t.equal(load(t, {}).oidc, undefined)
  t.equal(load(t, { ...ON, ENABLE_OIDC_PROVIDER: false }).oidc, undefined)
})

t.test('on: the issuer is PUBLIC_URL, no file means no fixed clients', async (t) => {
  t.strictSame(load(t, ON).oidc, { issuer: 'https://auth.example.com', fileClients: [] })
  t.equal(load(t, { ...ON, PUBLIC_URL: 'https://example.com/auth' }).oidc?.issuer, 'https://example.com/auth', 'with a path prefix')
})

t.test('each missing prerequisite stops the start, naming the setting', async (t) => {
  t.equal(errorOf(t, { ...ON, ENABLE_PORTAL: false }), 'Invalid configuration: ENABLE_OIDC_PROVIDER=true needs ENABLE_PORTAL=true (the sign-in and consent pages)')
  t.equal(errorOf(t, { ...ON, JWT_ALG: 'HS256' }), 'Invalid configuration: ENABLE_OIDC_PROVIDER=true needs an asymmetric JWT_ALG (ES256, EdDSA or RS256): relying parties verify ID tokens with the published keys')
  t.equal(errorOf(t, { ...ON, ENABLE_PORTAL: false, PUBLIC_URL: undefined }), 'Invalid configuration: ENABLE_OIDC_PROVIDER=true needs ENABLE_PORTAL=true (the sign-in and consent pages)')
  t.equal(errorOf(t, { ...ON, PUBLIC_URL: 'https://auth.example.com/' }), 'Invalid configuration: PUBLIC_URL is the OpenID Connect issuer with ENABLE_OIDC_PROVIDER=true: write it without a trailing slash')
  t.equal(errorOf(t, { ...ON, PUBLIC_URL: 'https://example.com/auth/' }), 'Invalid configuration: PUBLIC_URL is the OpenID Connect issuer with ENABLE_OIDC_PROVIDER=true: write it without a trailing slash')
  t.equal(errorOf(t, { ENABLE_OIDC_PROVIDER: false, OIDC_CLIENTS_FILE: '/nowhere.json' }), 'Invalid configuration: OIDC_CLIENTS_FILE needs ENABLE_OIDC_PROVIDER=true')
  t.match(errorOf(t, { ...ON, PUBLIC_URL: undefined }), /PUBLIC_URL/, 'no PUBLIC_URL: the portal refuses first, naming it')
})

t.test('production needs DATA_ENCRYPTION_KEYS for it, as for every feature that keeps keyed hashes', async (t) => {
  const production = { ...ON, APP_ENV: 'production', JWT_SECRET: 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp', DATA_ENCRYPTION_KEYS: undefined }
  t.match(errorOf(t, production), /DATA_ENCRYPTION_KEYS is required when APP_ENV=production/)
  t.ok(load(t, { ...production, DATA_ENCRYPTION_KEYS: DATA_KEY }).oidc, 'with the keys it starts')
})

t.test('the clients file: defaults filled, secrets read from the environment or a file, never from the file itself', async (t) => {
  process.env.GATEHOUSE_TEST_GRAFANA_SECRET = SECRET
  t.teardown(() => { delete process.env.GATEHOUSE_TEST_GRAFANA_SECRET })
  const file = clientsFile(t, [
    { ...CLIENT, client_secret_env: 'GATEHOUSE_TEST_GRAFANA_SECRET' },
    { ...CLIENT, client_id: 'gitea', name: 'Gitea', client_secret_file: secretFile(t, `${'g'.repeat(36)}\n`), token_endpoint_auth_method: 'client_secret_post' },
    { client_id: 'spa', name: 'SPA', type: 'public', redirect_uris: ['http://localhost:5173/cb'], scopes: ['openid'], skip_consent: true }
  ])
  const clients = load(t, { ...ON, OIDC_CLIENTS_FILE: file }).oidc?.fileClients
  t.strictSame(clients?.map((c) => [c.clientId, c.tokenEndpointAuthMethod, c.secret]), [
    ['grafana', 'client_secret_basic', SECRET],
    ['gitea', 'client_secret_post', 'g'.repeat(36)],
    ['spa', 'none', undefined]
  ])
  t.strictSame(clients?.[0], {
    clientId: 'grafana',
    name: 'Grafana',
    type: 'confidential',
    tokenEndpointAuthMethod: 'client_secret_basic',
    redirectUris: ['https://grafana.example.com/login/generic_oauth'],
    postLogoutRedirectUris: [],
    webOrigins: [],
    scopes: ['openid', 'profile', 'email'],
    allowedRoles: [],
    requireAal2: false,
    skipConsent: false,
    grantTypes: ['authorization_code'],
    roles: [],
    accessTokenTtl: undefined,
    disabled: false,
    secret: SECRET
  })
})

t.test('a bad clients file stops the start, naming OIDC_CLIENTS_FILE, the entry and the rule', async (t) => {
  const refusal = (content: unknown) => errorOf(t, { ...ON, OIDC_CLIENTS_FILE: clientsFile(t, content) })
  t.match(errorOf(t, { ...ON, OIDC_CLIENTS_FILE: '/nonexistent/clients.json' }), /^Invalid configuration: OIDC_CLIENTS_FILE \/nonexistent\/clients.json: ENOENT/)
  t.match(refusal('[{"client_id": '), /^Invalid configuration: OIDC_CLIENTS_FILE \S+: .*JSON/)
  t.match(refusal({ clients: [] }), /OIDC_CLIENTS_FILE \S+ must hold a JSON array of at most 1000 clients$/)
  const secretless = { ...CLIENT, client_secret_env: 'GATEHOUSE_TEST_UNSET_SECRET' }
  t.match(refusal([{ ...CLIENT, client_secret: 'inline' }]), /OIDC_CLIENTS_FILE \S+ \[0\] client_secret: Unexpected property$/, 'an inline secret')
  t.match(refusal([{ ...CLIENT, redirect_uris: ['http://grafana.example.com/cb'], client_secret_env: 'X' }]), /\[0\] \(grafana\): The redirect_uris field must be https \(http only on a loopback address or localhost\): http:\/\/grafana.example.com\/cb$/)
  t.match(refusal([{ ...CLIENT, client_id: 'Bad Id', client_secret_env: 'X' }]), /\[0\] client_id: /)
  t.match(refusal([{ ...CLIENT, name: 'x'.repeat(101), client_secret_env: 'X' }]), /\[0\] name: /)
  t.match(refusal([{ ...CLIENT, scopes: ['openid', 'admin'], client_secret_env: 'X' }]), /\[0\] scopes\/1: /)
  t.match(refusal([{ ...CLIENT, client_id: undefined, client_secret_env: 'X' }]), /\[0\]: client_id is required in the file/)
  t.match(refusal([CLIENT]), /\[0\] \(grafana\): a confidential client needs exactly one of client_secret_env and client_secret_file$/)
  t.match(refusal([{ ...CLIENT, client_secret_env: 'A', client_secret_file: '/x' }]), /exactly one of client_secret_env and client_secret_file$/)
  t.match(refusal([secretless]), /\[0\] \(grafana\): the secret in GATEHOUSE_TEST_UNSET_SECRET must be set, 32 to 1024 characters$/)
  t.match(refusal([{ ...CLIENT, client_secret_file: secretFile(t, 'short\n') }]), /the secret file must be set, 32 to 1024 characters$/)
  t.match(refusal([{ ...CLIENT, client_secret_file: '/nonexistent/secret' }]), /\(grafana\): client_secret_file: ENOENT/)
  t.match(refusal([{ client_id: 'spa', name: 'SPA', type: 'public', redirect_uris: ['https://spa.example/cb'], client_secret_env: 'X' }]), /\(spa\): a public client has no secret$/)
  process.env.GATEHOUSE_TEST_GRAFANA_SECRET = SECRET
  t.teardown(() => { delete process.env.GATEHOUSE_TEST_GRAFANA_SECRET })
  const good = { ...CLIENT, client_secret_env: 'GATEHOUSE_TEST_GRAFANA_SECRET' }
  t.match(refusal([good, good]), /OIDC_CLIENTS_FILE \S+ names client_id grafana twice$/)
  t.equal(load(t, { ...ON, OIDC_CLIENTS_FILE: clientsFile(t, [good]) }).oidc?.fileClients.length, 1, 'control: the good entry alone loads')
})
