import { execFile } from 'node:child_process'
import { copyFileSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { build, createUser, tempDir, type CreatedUser } from '../../helper.js'

/*
 * What a generated-client test needs: a listening server with an admin, the document it serves,
 * a temporary folder (never the tree) to generate into, and a strict type check of the client
 * program the test copies beside the generated code.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

export interface Served { baseUrl: string, admin: CreatedUser, documentUrl: string, folder: string }

export async function serve (t: Test): Promise<Served> {
  const app = await build(t)
  const admin = await createUser(app, { email: 'admin@example.com', name: 'Admin', roles: ['admin'] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const folder = tempDir(t)
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ type: 'module' }))
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'), 'dir')
  return { baseUrl, admin, documentUrl: `${baseUrl}/openapi.json`, folder }
}

/** Copies a client program from test/app/sdk/clients into the folder, as `name`. */
export function copyProgram (folder: string, program: string, name: string): void {
  copyFileSync(join(root, 'test', 'app', 'sdk', 'clients', program), join(folder, name))
}

/** How a client program is compiled: strict, as a consumer's project would be. */
export const STRICT = {
  strict: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2022', 'DOM', 'DOM.Iterable'],
  types: [],
  skipLibCheck: true
}

/**
 * tsc --strict over the folder's files, in a child process (so the listening server's event
 * loop stays free): the complaints, one line each, as `file(line): message`.
 */
export async function typeCheck (folder: string, files: string[]): Promise<string[]> {
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions: STRICT, files }))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const output = await new Promise<string>((resolve) => {
    execFile(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], { cwd: folder }, (_err, stdout, stderr) => resolve(stdout + stderr))
  })
  // the first line of each complaint; the indented lines after it elaborate
  return output.split('\n').filter((line) => line !== '' && !line.startsWith(' '))
}
