import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { build, tempDir } from '../../helper.js'

/*
 * The served document linted as its consumers lint it: `redocly lint` with the recommended
 * ruleset and the repository's redocly.yaml (which lists, with its reason, each rule turned
 * off). Redocly runs in a child process, on the document a listening server answers.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

interface Problem { ruleId: string, severity: string, message: string, location: Array<{ pointer: string }> }

function lint (file: string): Promise<{ problems: Problem[], output: string }> {
  const cli = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')
  const args = [cli, 'lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000']
  return new Promise((resolve) => {
    // REDOCLY_TELEMETRY=off: the linter sends nothing anywhere
    execFile(process.execPath, args, { cwd: dirname(file), env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }, (_err, stdout, stderr) => {
      const start = stdout.indexOf('{')
      const report = start === -1 ? { problems: [] } : JSON.parse(stdout.slice(start)) as { problems: Problem[] }
      resolve({ problems: report.problems, output: stdout + stderr })
    })
  })
}

t.test('GET /openapi.json lints with no error and no warning under Redocly\'s recommended rules', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const served = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`)
  t.equal(served.status, 200)
  const file = join(tempDir(t), 'openapi.json')
  const document = await served.json() as Record<string, unknown>
  writeFileSync(file, JSON.stringify(document))
  const { problems, output } = await lint(file)
  t.same(problems.map(summary), [], output)
  t.match(output, /openapi\.json: validated in/, 'the linter ran on the document')

  // the negative control: the document as it was before (no servers, the private notBlank keyword) fails
  const { servers: _servers, ...withoutServers } = document
  const before = JSON.stringify(withoutServers).replace('"pattern":"\\\\S"', '"notBlank":true')
  writeFileSync(file, before)
  const refused = await lint(file)
  t.same(refused.problems.map(summary), [
    'error no-empty-servers #/openapi: Servers must be present.',
    // the first email the document holds (the import's line schema is a shared component)
    'error struct #/components/schemas/ImportUser/properties/email/notBlank: Property `notBlank` is not expected here.'
  ], refused.output)
})

function summary (p: Problem): string {
  return `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`
}

t.test('with password reset and email codes on, the document still lints clean', async (t) => {
  const app = await build(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}', ENABLE_EMAIL_OTP: true })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const served = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`)
  const file = join(tempDir(t), 'openapi.json')
  const document = await served.json() as { paths: Record<string, unknown> }
  t.ok(document.paths['/auth/verify-otp'], 'the recovery routes are in it')
  writeFileSync(file, JSON.stringify(document))
  const { problems, output } = await lint(file)
  t.same(problems.map(summary), [], output)
})

t.test('with the OpenID Connect provider on (routes/api/oauth2-clients.ts, routes/api/grants.ts), the document still lints clean', async (t) => {
  const app = await build(t, { ENABLE_OIDC_PROVIDER: true, ENABLE_PORTAL: true, PUBLIC_URL: 'https://auth.gatehouse.test', JWT_ALG: 'ES256' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const served = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`)
  const file = join(tempDir(t), 'openapi.json')
  const document = await served.json() as { paths: Record<string, unknown> }
  t.ok(document.paths['/api/auth/grants/{client_id}'], 'the provider\'s routes are in it')
  writeFileSync(file, JSON.stringify(document))
  const { problems, output } = await lint(file)
  t.same(problems.map(summary), [], output)
})
