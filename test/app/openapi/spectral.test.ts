import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { build, tempDir, type TestContext } from '../../helper.js'
import { TOTP_ON } from '../../routes/auth/two-factor/support.js'
import { idpValues } from '../../routes/api/identities-support.js'

/*
 * The served document linted as its consumers lint it, beside Redocly (redocly.test.ts): Stoplight
 * Spectral's `spectral:oas` ruleset through the repository's .spectral.yaml (which lists, with its
 * reason, each rule turned off), in a child process, on the document a listening server answers.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

interface Problem { code: string, severity: number, message: string, path: string[] }
const SEVERITY = ['error', 'warning', 'info', 'hint']

function lint (file: string): Promise<{ problems: Problem[], output: string }> {
  const cli = join(root, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js')
  const args = [cli, 'lint', file, '--ruleset', join(root, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'error', '--quiet']
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: dirname(file) }, (_err, stdout, stderr) => {
      const start = stdout.indexOf('[')
      resolve({ problems: start === -1 ? [] : JSON.parse(stdout.slice(start)) as Problem[], output: stdout + stderr })
    })
  })
}

function summary (p: Problem): string {
  return `${SEVERITY[p.severity] ?? p.severity} ${p.code} ${p.path.join('.')}: ${p.message}`
}

async function served (t: TestContext, values: Record<string, unknown>): Promise<{ file: string, document: Record<string, unknown> }> {
  const app = await build(t, values)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`)
  const document = await res.json() as Record<string, unknown>
  const file = join(tempDir(t), 'openapi.json')
  writeFileSync(file, JSON.stringify(document))
  return { file, document }
}

t.test('GET /openapi.json lints with no error and no warning under Spectral\'s spectral:oas, with every feature on', async (t) => {
  const { file, document } = await served(t, idpValues(t, {
    ...TOTP_ON,
    ENABLE_PASSWORD_RESET: true,
    PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}',
    ENABLE_EMAIL_OTP: true,
    ENABLE_PASSKEYS: true,
    // the OpenID Connect provider's clients and grants routes (docs/oidc.md)
    ENABLE_OIDC_PROVIDER: true,
    ENABLE_PORTAL: true,
    PUBLIC_URL: 'http://localhost:3000',
    JWT_ALG: 'ES256'
    // and ENABLE_IDP_LOGIN: the connected accounts' routes (docs/identity-providers.md)
  }))
  t.ok((document.paths as Record<string, unknown>)['/auth/verify-2fa'], 'the two-factor routes are in it')
  t.ok((document.paths as Record<string, unknown>)['/auth/passkeys/login/verify'], 'and the passkey routes')
  t.ok((document.paths as Record<string, unknown>)['/api/oauth2/clients/{client_id}'], 'the provider\'s routes are in it')
  t.ok((document.paths as Record<string, unknown>)['/api/users/{id}/identities/{identity_id}'], 'and the connected accounts\' routes')
  const { problems, output } = await lint(file)
  t.same(problems.map(summary), [], output.slice(0, 2000))

  // the negative control: the document without the two-factor tag's declaration, as it was
  const tags = (document.tags as Array<{ name: string }>).filter((tag) => tag.name !== 'two-factor')
  writeFileSync(file, JSON.stringify({ ...document, tags }))
  const refused = await lint(file)
  const undeclared = refused.problems.filter((p) => p.code === 'operation-tag-defined')
  t.equal(undeclared.length, 5, refused.output)
  t.same([...new Set(undeclared.map((p) => p.message))], ['Operation tags must be defined in global tags.'])
})

t.test('with the features off, the document lints clean too', async (t) => {
  const { file } = await served(t, {})
  const { problems, output } = await lint(file)
  t.same(problems.map(summary), [], output.slice(0, 2000))
})
