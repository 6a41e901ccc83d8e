import { execFile } from 'node:child_process'
import { copyFileSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import t from 'tap'
import { build, createUser, tempDir } from '../helper.js'
import { ISO, JWT, UUID } from '../patterns.js'
import { STRICT } from './sdk/generated.js'

/*
 * The SDK a client would generate: openapi-typescript turns the served /openapi.json into
 * `paths` types, openapi-fetch uses them, and test/app/sdk/flow.ts (strict, type-checked here)
 * drives the whole flow against a real listening server. Everything generated lives in a
 * temporary folder, never in the tree.
 */
const here = dirname(fileURLToPath(import.meta.url))

const app = await build(t)
const admin = await createUser(app, { email: 'admin@example.com', name: 'Admin', roles: ['admin'] })
await app.listen({ port: 0, host: '127.0.0.1' })
const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

const sdk = tempDir(t)
const served = await fetch(`${baseUrl}/openapi.json`)
writeFileSync(join(sdk, 'schema.d.ts'), astToString(await openapiTS(await served.json() as OpenAPI3, { silent: true })))
writeFileSync(join(sdk, 'package.json'), JSON.stringify({ type: 'module' }))
symlinkSync(resolve(here, '..', '..', 'node_modules'), join(sdk, 'node_modules'), 'dir')
copyFileSync(join(here, 'sdk', 'flow.ts'), join(sdk, 'flow.ts'))
copyFileSync(join(here, 'sdk', 'misuse.ts'), join(sdk, 'misuse.ts'))

/**
 * The type checker's complaints per file, as `line: message`. tsc runs in a child process (one
 * program for both files), so the listening server's event loop stays free meanwhile.
 */
async function typeCheck (files: string[]): Promise<Record<string, string[]>> {
  writeFileSync(join(sdk, 'tsconfig.json'), JSON.stringify({ compilerOptions: STRICT, files }))
  const tsc = resolve(here, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc')
  const output = await new Promise<string>((resolve) => {
    execFile(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], { cwd: sdk }, (_err, stdout, stderr) => resolve(stdout + stderr))
  })
  const complaints: Record<string, string[]> = Object.fromEntries(files.map((f) => [f, []]))
  // the first line of each complaint; the indented lines after it elaborate
  for (const line of output.split('\n').filter((l) => l !== '' && !l.startsWith(' '))) {
    const [, file = 'tsc', row = '0', message = line] = /^(\S+?)\((\d+),\d+\): error (.*)$/.exec(line) ?? []
    ;(complaints[file] ??= []).push(`${row}: ${message}`)
  }
  return complaints
}

/** test/app/sdk/flow.ts's export, restated: that file compiles only beside the generated schema. */
type RunFlow = (baseUrl: string, admin: { email: string, password: string }) => Promise<Record<string, { status: number, body: unknown, location?: string | null }>>

const complaints = await typeCheck(['flow.ts', 'misuse.ts'])

t.test('the SDK generated from GET /openapi.json type-checks a client program in strict mode', async (t) => {
  t.match(served.headers.get('content-type'), /^application\/json/)
  t.same(complaints.tsc ?? [], [], 'tsc reports nothing outside the files')
  t.same(complaints['schema.d.ts'] ?? [], [])
  t.same(complaints['flow.ts'], [])
})

t.test('the type check refuses every misuse of the SDK, the wrong 422 errors type included', async (t) => {
  const source = readFileSync(join(sdk, 'misuse.ts'), 'utf8')
  const expected = source.split('\n').flatMap((text, i) => (text.includes('// MUST-FAIL') ? [i + 1] : []))
  t.equal(expected.length, 5)
  const failing = [...new Set((complaints['misuse.ts'] ?? []).map((c) => Number(c.split(':')[0])))]
  t.same(failing, expected, complaints['misuse.ts']?.join('\n') ?? '')
})

t.test('the SDK drives login, me, create, list, update, change password, refresh, logout and a 422 against a listening server', async (t) => {
  const { runFlow } = await import(pathToFileURL(join(sdk, 'flow.ts')).href) as { runFlow: RunFlow }
  const seen = await runFlow(baseUrl, admin)
  const user = (body: unknown) => (body as { user: unknown }).user

  t.equal(seen.login?.status, 200)
  const login = seen.login?.body as Record<string, unknown>
  t.match(login, { access_token: JWT, refresh_token: JWT, token_type: 'Bearer', expires_in: 900, expires_at: ISO, refresh_expires_at: ISO })
  const adminUser = { id: admin.id, email: 'admin@example.com', name: 'Admin', age: null, created_at: ISO, updated_at: ISO, roles: ['admin'], is_superuser: false, email_verified: false }
  t.match(user(login), adminUser)

  t.equal(seen.me?.status, 200)
  t.same(seen.me?.body, user(login))

  t.equal(seen.created?.status, 201)
  const created = seen.created?.body as { id: string, created_at: string, updated_at: string }
  t.match(created.id, UUID)
  t.equal(seen.created?.location, `/api/users/${created.id}`)
  const ada = { id: created.id, email: 'ada@example.com', name: 'Ada Lovelace', age: 36, created_at: created.created_at, updated_at: created.updated_at, roles: ['user'], is_superuser: false, email_verified: false }
  t.same(created, ada)

  t.equal(seen.list?.status, 200)
  t.same(seen.list?.body, {
    data: [user(login), ada],
    pagination: { current_page: 1, per_page: 10, total: 2, last_page: 1, from: 1, to: 10 }
  })

  t.equal(seen.updated?.status, 200)
  const updated = seen.updated?.body as { updated_at: string }
  t.match(updated.updated_at, ISO)
  t.same(updated, { ...ada, name: 'Augusta Ada King', age: 37, updated_at: updated.updated_at })

  t.equal(seen.userLogin?.status, 200)
  t.equal(seen.changed?.status, 200)
  t.same(seen.changed?.body, { message: 'Password changed' })
  t.equal(seen.oldPassword?.status, 401)
  t.same(seen.oldPassword?.body, { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' })

  t.equal(seen.refreshed?.status, 200)
  const refreshed = seen.refreshed?.body as Record<string, unknown>
  t.match(refreshed, { access_token: JWT, refresh_token: JWT, token_type: 'Bearer', expires_in: 900, expires_at: ISO, refresh_expires_at: ISO })
  t.not(refreshed.refresh_token, (seen.userLogin?.body as Record<string, unknown>).refresh_token, 'the refresh token is rotated')
  const afterChange = user(refreshed) as { updated_at: string }
  t.ok(afterChange.updated_at >= updated.updated_at, 'the password change touched updated_at')
  t.same(afterChange, { ...ada, name: 'Augusta Ada King', age: 37, updated_at: afterChange.updated_at })

  t.equal(seen.loggedOut?.status, 204)
  t.equal(seen.afterLogout?.status, 401)
  t.same(seen.afterLogout?.body, { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' })

  t.equal(seen.invalid?.status, 422)
  t.same(seen.invalid?.body, {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: {
      email: ['The email field must be a valid email address'],
      password: ['The password field must be at least 8 characters'],
      name: ['The name field must be at least 2 characters']
    }
  })
  t.same(seen.invalidEmailMessages?.body, ['The email field must be a valid email address'])
})
