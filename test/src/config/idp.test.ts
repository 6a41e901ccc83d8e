import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { tempDir } from '../../helper.js'
import { errorOf, load } from './support.js'

/* Sign-in through external providers (src/config/idp.ts): its prerequisites, and the providers file read at start. */

const PORTAL = { ENABLE_PORTAL: true, PUBLIC_URL: 'https://auth.example.com' }
const OIDC = { id: 'corp', type: 'oidc', display_name: 'Corp SSO', client_id: 'gatehouse', client_secret_env: 'GATEHOUSE_TEST_IDP_SECRET', issuer: 'https://sso.example.com/realms/corp' }
const GITHUB = { id: 'github', type: 'github', display_name: 'GitHub', client_id: 'Iv1.abc', client_secret_env: 'GATEHOUSE_TEST_IDP_SECRET' }
const SECRET = 'upstream-secret-value'

function providersFile (t: Test, content: unknown): string {
  const file = join(tempDir(t), 'providers.json')
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

function secretFile (t: Test, content: string, mode: number): string {
  const file = join(tempDir(t), 'secret')
  writeFileSync(file, content)
  chmodSync(file, mode)
  return file
}

function on (t: Test, providers: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...PORTAL, ENABLE_IDP_LOGIN: true, IDP_PROVIDERS_FILE: providersFile(t, providers), ...extra }
}

t.beforeEach(() => { process.env.GATEHOUSE_TEST_IDP_SECRET = SECRET })
t.afterEach(() => { delete process.env.GATEHOUSE_TEST_IDP_SECRET })

t.test('off by default: no providers, and everything else as before', async (t) => {
  t.equal(load(t, {}).idp, undefined)
  t.equal(load(t, { ...PORTAL }).idp, undefined)
})

t.test('each missing prerequisite stops the start, naming both settings', async (t) => {
  t.equal(errorOf(t, { ...on(t, [OIDC]), ENABLE_PORTAL: false, PUBLIC_URL: undefined }),
    'Invalid configuration: ENABLE_IDP_LOGIN=true needs ENABLE_PORTAL=true (the sign-in page and the callback pages)')
  t.equal(errorOf(t, { ...PORTAL, ENABLE_IDP_LOGIN: true }), 'Invalid configuration: ENABLE_IDP_LOGIN=true needs IDP_PROVIDERS_FILE (the providers)')
  t.equal(errorOf(t, { ...PORTAL, IDP_PROVIDERS_FILE: providersFile(t, [OIDC]) }), 'Invalid configuration: IDP_PROVIDERS_FILE needs ENABLE_IDP_LOGIN=true')
})

t.test('the providers file: defaults filled per type, the secret from the environment or a private file', async (t) => {
  const file = secretFile(t, 'from-a-file\n', 0o600)
  const providers = load(t, on(t, [OIDC, { ...GITHUB, client_secret_env: undefined, client_secret_file: file }], { ENABLE_REGISTER: true })).idp?.providers
  const corp = {
    id: 'corp',
    type: 'oidc',
    displayName: 'Corp SSO',
    clientId: 'gatehouse',
    clientSecret: SECRET,
    scopes: ['openid', 'email', 'profile'],
    issuer: 'https://sso.example.com/realms/corp',
    githubUrl: 'https://github.com',
    githubApiUrl: 'https://api.github.com',
    allowedDomains: [],
    allowSignup: true,
    linkPolicy: 'after_login',
    roleMapping: undefined,
    satisfiesMfa: false
  }
  t.strictSame(providers, [corp, {
    ...corp,
    id: 'github',
    type: 'github',
    displayName: 'GitHub',
    clientId: 'Iv1.abc',
    clientSecret: 'from-a-file',
    scopes: ['read:user', 'user:email'],
    issuer: undefined
  }])
  t.equal(load(t, on(t, [OIDC])).idp?.providers[0]?.allowSignup, false, 'allow_signup defaults to ENABLE_REGISTER (off)')
})

t.test('every field as written: scopes as a string or an array, domains normalised, local upstreams over http', async (t) => {
  const full = {
    ...OIDC,
    issuer: 'http://127.0.0.1:9000/',
    scopes: 'openid email groups',
    allowed_domains: ['Example.COM', 'corp.example.org.'],
    allow_signup: true,
    link_policy: 'auto_verified',
    role_mapping: { claim: 'groups', values: { admins: ['admin', 'ops'], staff: ['staff'] } },
    satisfies_mfa: true
  }
  const hub = { ...GITHUB, id: 'ghe', github_url: 'http://localhost:9001/', github_api_url: 'http://localhost:9001/api/v3', scopes: ['read:user', 'user:email', 'read:org'], link_policy: 'never' }
  const [corp, ghe] = load(t, on(t, [full, hub])).idp?.providers ?? []
  t.strictSame([corp?.issuer, corp?.scopes, corp?.allowedDomains, corp?.allowSignup, corp?.linkPolicy, corp?.roleMapping, corp?.satisfiesMfa], [
    'http://127.0.0.1:9000/', ['openid', 'email', 'groups'], ['example.com', 'corp.example.org'], true, 'auto_verified',
    { claim: 'groups', values: { admins: ['admin', 'ops'], staff: ['staff'] } }, true
  ])
  t.strictSame([ghe?.githubUrl, ghe?.githubApiUrl, ghe?.scopes, ghe?.linkPolicy], ['http://localhost:9001', 'http://localhost:9001/api/v3', ['read:user', 'user:email', 'read:org'], 'never'])
})

t.test('a client_secret key anywhere in the file stops the start, naming where', async (t) => {
  const refusal = (content: unknown) => errorOf(t, on(t, content))
  t.match(refusal([{ ...OIDC, client_secret: 'inline' }]), /^Invalid configuration: IDP_PROVIDERS_FILE \S+ holds a client_secret \(at \/0\/client_secret\): name the secret by client_secret_env or client_secret_file instead/)
  t.match(refusal([{ ...OIDC, role_mapping: { claim: 'groups', values: {}, client_secret: 'x' } }]), /holds a client_secret \(at \/0\/role_mapping\/client_secret\)/)
  t.match(refusal({ client_secret: 'x' }), /holds a client_secret \(at \/client_secret\)/)
})

t.test('a bad providers file stops the start, naming IDP_PROVIDERS_FILE, the entry and the rule', async (t) => {
  const refusal = (content: unknown, extra?: Record<string, unknown>) => errorOf(t, on(t, content, extra))
  t.match(errorOf(t, { ...PORTAL, ENABLE_IDP_LOGIN: true, IDP_PROVIDERS_FILE: '/nonexistent/providers.json' }), /^Invalid configuration: IDP_PROVIDERS_FILE \/nonexistent\/providers.json: ENOENT/)
  t.match(refusal('[{"id": '), /^Invalid configuration: IDP_PROVIDERS_FILE \S+: .*JSON/)
  t.match(refusal([]), /IDP_PROVIDERS_FILE \S+ must hold a JSON array of 1 to 32 providers$/)
  t.match(refusal({ providers: [OIDC] }), /must hold a JSON array of 1 to 32 providers$/)
  t.match(refusal([{ ...OIDC, id: 'Corp' }]), /\[0\] id: Expected string to match/)
  t.match(refusal([{ ...OIDC, id: 'x'.repeat(33) }]), /\[0\] id: /)
  t.match(refusal([{ ...OIDC, type: 'saml' }]), /\[0\] type: /)
  t.match(refusal([{ ...OIDC, extra: 1 }]), /\[0\] extra: Unexpected property$/)
  t.match(refusal([{ ...OIDC, client_secret_env: undefined }]), /\[0\] \(corp\): name the client secret by exactly one of client_secret_env and client_secret_file$/)
  t.match(refusal([{ ...OIDC, client_secret_file: '/x' }]), /exactly one of client_secret_env and client_secret_file$/)
  t.match(refusal([{ ...OIDC, client_secret_env: 'GATEHOUSE_TEST_UNSET' }]), /\(corp\): the client secret in GATEHOUSE_TEST_UNSET must be set, 1 to 1024 characters$/)
  t.match(refusal([{ ...OIDC, client_secret_env: undefined, client_secret_file: '/nonexistent/secret' }]), /\(corp\): client_secret_file \/nonexistent\/secret does not exist$/)
  t.match(refusal([{ ...OIDC, client_secret_env: undefined, client_secret_file: secretFile(t, 's', 0o644) }]),
    /the client_secret_file of corp \S+ is open to other users \(mode 0644\); make it readable by its owner only \(chmod 600\)$/)
  t.match(refusal([{ ...OIDC, client_secret_env: undefined, client_secret_file: secretFile(t, 's', 0o640) }]), /is open to other users \(mode 0640\)/)
  t.match(refusal([{ ...OIDC, issuer: undefined }]), /\(corp\): a provider of type oidc needs its issuer$/)
  t.match(refusal([{ ...OIDC, issuer: 'http://sso.example.com' }]), /\(corp\): issuer must be https \(http only for a loopback or localhost host outside production\)$/)
  t.match(refusal([{ ...OIDC, issuer: 'http://127.0.0.1:9000' }], { APP_ENV: 'production', JWT_SECRET: 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp', DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` }),
    /\(corp\): issuer must be https/, 'not even loopback in production')
  t.match(refusal([{ ...OIDC, issuer: 'sso.example.com' }]), /\(corp\): issuer must be an absolute URL: "sso.example.com" is not one$/)
  t.match(refusal([{ ...OIDC, issuer: 'https://sso.example.com/?realm=x' }]), /\(corp\): issuer must have no credentials, query or fragment$/)
  t.match(refusal([{ ...GITHUB, issuer: 'https://github.com' }]), /\(github\): issuer is for type oidc/)
  t.match(refusal([{ ...GITHUB, github_url: 'http://github.example.com' }]), /\(github\): github_url must be https/)
  t.match(refusal([{ ...OIDC, github_api_url: 'https://api.github.com' }]), /\(corp\): github_url and github_api_url are for type github$/)
  t.match(refusal([{ ...OIDC, scopes: ['email', 'profile'] }]), /\(corp\): the scopes of an oidc provider include openid$/)
  t.match(refusal([{ ...OIDC, scopes: 'openid  "email' }]), /\(corp\): scopes must be scope tokens separated by single spaces$/)
  t.match(refusal([{ ...OIDC, allowed_domains: ['localhost'] }]), /\(corp\): allowed_domains lists domain names \(example.com\): "localhost" is not one$/)
  t.match(refusal([{ ...OIDC, allowed_domains: ['https://example.com'] }]), /allowed_domains lists domain names/)
  t.match(refusal([{ ...OIDC, link_policy: 'always' }]), /\[0\] link_policy: /)
  t.match(refusal([{ ...OIDC, role_mapping: { claim: 'groups', values: { admins: ['Admin'] } } }]), /\[0\] role_mapping\/values\/admins\/0: Expected string to match/, 'a role name as elsewhere')
  t.match(refusal([{ ...OIDC, role_mapping: { values: {} } }]), /\[0\] role_mapping\/claim: /)
  t.match(refusal([OIDC, { ...GITHUB, id: 'corp' }]), /IDP_PROVIDERS_FILE \S+ names the provider id corp twice$/)
  t.equal(load(t, on(t, [OIDC, GITHUB])).idp?.providers.length, 2, 'control: the good entries load')
})
