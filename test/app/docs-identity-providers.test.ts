import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Identity, IdentityList } from '../../schemas/identities.js'
import { loadConfig } from '../../src/config/config.js'
import { buildAjv } from '../../src/validation/index.js'
import { tempDir, TEST_SECRET } from '../helper.js'
import { ROOT } from '../process/server-process.js'

/*
 * docs/identity-providers.md's snippets are what an operator copies: every ```json block parses, every
 * providers file and provider entry in it is taken by the start (src/config/idp.ts, with its secret
 * files and variables standing in), every role mapping too, and the identities list is what the API's
 * schema says it answers.
 */

/** GET /api/auth/identities's answer, checked by the app's own validator (its formats: uuid, date-time) */
const ajv = buildAjv()
ajv.addSchema(Identity)
const identityList = ajv.compile(IdentityList)

const DOC = readFileSync(join(ROOT, 'docs/identity-providers.md'), 'utf8')
const blocks = [...DOC.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')

/** The start's reading of these providers: undefined when it takes them, else the refusal's message. */
function refusalOf (t: Test, providers: Array<Record<string, unknown>>): string | undefined {
  const dir = tempDir(t)
  const secret = join(dir, 'secret')
  writeFileSync(secret, 'a-client-secret\n', { mode: 0o600 })
  // the paths and variables of the examples name the operator's secrets: a file of the test's stands in
  const entries = providers.map((p) => {
    const { client_secret_file: file, client_secret_env: env, ...rest } = p
    return file === undefined && env === undefined ? p : { ...rest, client_secret_file: secret }
  })
  const file = join(dir, 'providers.json')
  writeFileSync(file, JSON.stringify(entries))
  try {
    loadConfig({
      fromEnvironment: false,
      values: { DATA_DIR: dir, JWT_SECRET: TEST_SECRET, ENABLE_PORTAL: true, PUBLIC_URL: 'https://auth.example.com', ENABLE_IDP_LOGIN: true, IDP_PROVIDERS_FILE: file }
    })
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

const GITHUB = { id: 'github', type: 'github', display_name: 'GitHub', client_id: 'x', client_secret_file: '/etc/secret' }

t.test('every json block of docs/identity-providers.md parses and is what gatehouse takes', async (t) => {
  t.ok(blocks.length >= 8, `the blocks are found (${blocks.length})`)
  const kinds = new Set<string>()
  for (const [index, text] of blocks.entries()) {
    let value: unknown
    t.doesNotThrow(() => { value = JSON.parse(text) }, `block ${index + 1} parses`)
    if (Array.isArray(value)) {
      kinds.add('providers file')
      t.equal(refusalOf(t, value as Array<Record<string, unknown>>), undefined, `block ${index + 1}: a providers file the start takes`)
    } else if (typeof value === 'object' && value !== null && 'type' in value) {
      kinds.add('provider')
      t.equal(refusalOf(t, [value as Record<string, unknown>]), undefined, `block ${index + 1}: a provider entry the start takes`)
    } else if (typeof value === 'object' && value !== null && 'claim' in value) {
      kinds.add('role mapping')
      t.equal(refusalOf(t, [{ ...GITHUB, role_mapping: value }]), undefined, `block ${index + 1}: a role mapping the start takes`)
    } else {
      kinds.add('identities')
      t.ok(identityList(value), `block ${index + 1}: an answer of GET /api/auth/identities`)
    }
  }
  t.strictSame([...kinds].sort(), ['identities', 'provider', 'providers file', 'role mapping'])
})

t.test('negative control: the same checks refuse a broken entry', async (t) => {
  t.match(refusalOf(t, [{ ...GITHUB, issuer: 'https://github.com' }]), /issuer is for type oidc/)
  t.match(refusalOf(t, [{ ...GITHUB, role_mapping: { claim: 'groups', values: { ops: ['Not A Role'] } } }]), /role_mapping/)
  t.match(refusalOf(t, [{ ...GITHUB, type: 'oidc', issuer: 'https://login.microsoftonline.com/common/v2.0/' }, GITHUB]), /twice/)
  t.notOk(identityList({ data: [{ id: 'not-a-uuid', provider: 'github', display_name: 'GitHub', email: null, created_at: '2026-03-04T05:06:07.000Z', last_login_at: null }] }), 'an id that is no UUID')
})
