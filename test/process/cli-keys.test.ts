import { randomBytes } from 'node:crypto'
import t from 'tap'
import { buildFrom, createUser, databaseEnv, login, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { ISO } from '../patterns.js'
import { cli } from './cli-process.js'

/*
 * gatehouse keys list|rotate|revoke as a real process on the database a running app uses
 * (docs/keys.md): the same key service as /api/keys, and a key revoked by the CLI refused by the
 * app within one second.
 */

const KEYS = `k1:${randomBytes(32).toString('base64')}`
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

function kidOf (token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid
}

t.test('keys list, rotate and revoke: text and --json; a revoked key\'s tokens are refused within one second', async (t) => {
  const dataDir = tempDir(t)
  const settings = { JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: KEYS }
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ...settings }
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...settings }))
  const { access_token: token } = await login(app, await createUser(app))
  const current = kidOf(token)

  const listed = await cli(['keys', 'list', '--json'], env)
  t.equal(listed.code, 0, listed.stderr)
  const [first, standby] = (JSON.parse(listed.stdout) as { data: Array<Record<string, unknown>> }).data
  t.strictSame(JSON.parse(listed.stdout), {
    data: [
      { kid: current, alg: 'ES256', state: 'current', created_at: first?.created_at, activates_at: first?.activates_at, retires_at: null },
      { kid: standby?.kid, alg: 'ES256', state: 'next', created_at: standby?.created_at, activates_at: null, retires_at: null }
    ]
  })
  t.match(first?.created_at, ISO)

  const rotated = await cli(['keys', 'rotate', '--json'], env)
  t.equal(rotated.code, 0, rotated.stderr)
  const next = JSON.parse(rotated.stdout) as Record<string, unknown>
  t.strictSame(next, { kid: next.kid, alg: 'ES256', state: 'next', created_at: next.created_at, activates_at: next.activates_at, retires_at: null })
  t.not(next.kid, current)
  const text = await cli(['keys', 'list'], env)
  t.equal(text.code, 0, text.stderr)
  t.match(text.stdout, new RegExp(`^${current}  ES256  current  created \\S+  signs from \\S+  gone at \\S+\\n${String(standby?.kid)}  ES256  next  created \\S+  standby \\(signs once promoted\\)\\n${String(next.kid)}  ES256  next  created \\S+  signs from \\S+\\n$`))

  t.equal((await app.inject({ url: '/auth/me', headers: { authorization: `Bearer ${token}` } })).statusCode, 200, 'the token works before the revocation')
  const revoked = await cli(['keys', 'revoke', current], env)
  t.equal(revoked.code, 0, revoked.stderr)
  t.equal(revoked.stdout, `revoked ${current}\n`)
  let status = 200
  const deadline = Date.now() + 1000
  while (status === 200 && Date.now() < deadline) {
    await sleep(50)
    status = (await app.inject({ url: '/auth/me', headers: { authorization: `Bearer ${token}` } })).statusCode
  }
  t.equal(status, 401, 'the app refuses the revoked key\'s token within one second')

  const unknown = await cli(['keys', 'revoke', 'no-such-kid'], env)
  t.equal(unknown.code, 1)
  t.equal(unknown.stderr, 'gatehouse: Signing key not found\n')
  const missing = await cli(['keys', 'revoke'], env)
  t.equal(missing.code, 2)
  t.equal(missing.stderr, 'gatehouse: missing <kid>\nusage: gatehouse keys revoke <kid>\n')
})

t.test('under HS256 there are no keys to list, rotate or revoke', async (t) => {
  const env = { ...await databaseEnv(t, tempDir(t)), JWT_SECRET: TEST_SECRET }
  const listed = await cli(['keys', 'list'], env)
  t.equal(listed.code, 0, listed.stderr)
  t.equal(listed.stdout, 'no signing keys (JWT_ALG=HS256 signs with JWT_SECRET)\n')
  const rotated = await cli(['keys', 'rotate'], env)
  t.equal(rotated.code, 1)
  t.equal(rotated.stderr, 'gatehouse: Signing keys exist only with an asymmetric JWT_ALG (ES256, EdDSA or RS256)\n')
})
