import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import t from 'tap'

/*
 * The test tree mirrors the source tree (docs/architecture.md): a test file under test/src,
 * test/plugins or test/routes names the source it proves, by its path (test/src/tokens/issuer.test.ts
 * ↔ src/tokens/issuer.ts; test/routes/auth/two-factor/enrol.test.ts ↔ routes/auth/two-factor.ts) or,
 * where one test proves several files or a behaviour across them, by a source path in its text.
 */

const ROOT = join(import.meta.dirname, '..', '..')
const MIRRORED = ['test/src', 'test/plugins', 'test/routes']
const SOURCE_PATH = /\b(?:src|plugins|routes)\/[\w./-]*?\.c?ts\b/g

function testFiles (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

const exists = (path: string) => existsSync(join(ROOT, path))

/** The source files and folders a test's own path mirrors: itself, or the file its folder is named after. */
function mirrorsOf (testPath: string): string[] {
  const source = relative('test', testPath).replace(/\.test\.ts$/, '')
  const folder = dirname(source)
  return [`${source}.ts`, `${source}.cts`, `${source}/`, ...(folder.includes('/') ? [`${folder}.ts`] : [])]
}

/** Why a test file names no source, or undefined when its path or its text names one that exists. */
function namesNoSource (testPath: string, text: string): string | undefined {
  if (mirrorsOf(testPath).some(exists)) return undefined
  const named = [...text.matchAll(SOURCE_PATH)].map((m) => m[0])
  if (named.some(exists)) return undefined
  return named.length === 0
    ? `${testPath}: neither ${mirrorsOf(testPath)[0]} nor a source path in its text`
    : `${testPath}: names only missing sources (${named.join(', ')})`
}

t.test('every test file under test/src, test/plugins and test/routes names a source file that exists', async (t) => {
  const files = MIRRORED.flatMap(testFiles)
  t.ok(files.length > 50, `found ${files.length} test files`)
  const unnamed = files.map((f) => namesNoSource(f, readFileSync(join(ROOT, f), 'utf8'))).filter((why) => why !== undefined)
  t.same(unnamed, [])
})

t.test('the check reports a test that names no source, or only one that is gone (the negative control)', async (t) => {
  t.equal(namesNoSource('test/src/tokens/issuer.test.ts', ''), undefined, 'a mirrored path')
  t.equal(namesNoSource('test/routes/auth/two-factor/enrol.test.ts', ''), undefined, 'a folder named after its source file')
  t.equal(namesNoSource('test/src/tokens/nothing.test.ts', '// proves src/tokens/issuer.ts'), undefined, 'a source named in the text')
  t.equal(namesNoSource('test/src/tokens/nothing.test.ts', "import x from '../../../src/tokens/issuer.js'"),
    'test/src/tokens/nothing.test.ts: neither src/tokens/nothing.ts nor a source path in its text', 'an import is not a header')
  t.equal(namesNoSource('test/src/tokens/nothing.test.ts', ''), 'test/src/tokens/nothing.test.ts: neither src/tokens/nothing.ts nor a source path in its text')
  t.equal(namesNoSource('test/plugins/gone.test.ts', '// plugins/gone.ts'), 'test/plugins/gone.test.ts: names only missing sources (plugins/gone.ts)')
  t.equal(namesNoSource('test/src/tokens/issuer/nothing.test.ts', ''), undefined, 'the folder test/src/tokens/issuer/ is named after src/tokens/issuer.ts')
  t.equal(namesNoSource('test/src/accounts/nothing.test.ts', ''), 'test/src/accounts/nothing.test.ts: neither src/accounts/nothing.ts nor a source path in its text',
    'a folder of src/ alone is not a source named')
})
