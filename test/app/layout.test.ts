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
// the whole-system folders (test/app, process, proxies, oidc, browser, postgres, redis, mail) mirror no one source
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

/*
 * test/passes.sh runs the folders of test/src it lists in STORE_FREE in the first pass only, as
 * they open no store: a file there that did (through test/helper.ts, test/mail/outbox.ts or the
 * app, the services or src/db/ themselves) would prove on SQLite only what the PostgreSQL pass is
 * there to prove. Its folder then comes off the list. src/db/redis.ts is the Redis client, which
 * the tests reach at TEST_REDIS_URL whatever the pass.
 */
const STORE_OPENERS: Record<string, string[] | 'all'> = {
  'test/helper.ts': ['build', 'buildFrom', 'buildBare', 'testConfig', 'prepareDatabase', 'databaseEnv', 'rawSql', 'postgresUrlFor', 'STORE_KIND'],
  'test/mail/outbox.ts': ['openStore', 'enqueue', 'waitForRow'],
  'src/app.ts': 'all',
  'src/services.ts': 'all',
  'src/db/': 'all'
}
const IMPORT = /\bimport\s+(?:([\w*{}\s,]+?)\s+from\s+)?'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g

/** The folders of test/src that test/passes.sh runs once, from its STORE_FREE='a|b|c'. */
function storeFreeFolders (passes: string): string[] {
  const list = /^STORE_FREE='([^']*)'$/m.exec(passes)?.[1]
  return list === undefined || list === '' ? [] : list.split('|').map((name) => `test/src/${name}`)
}

/** What in `text` (the file at `path`) would open a store, one line each. */
function storeImports (path: string, text: string): string[] {
  return [...text.matchAll(IMPORT)].flatMap((m) => {
    const specifier = m[2] ?? m[3] ?? ''
    if (!specifier.startsWith('.')) return []
    const target = relative(ROOT, join(ROOT, dirname(path), specifier)).replace(/\.c?js$/, '.ts')
    const opener = Object.keys(STORE_OPENERS).find((key) => key.endsWith('/') ? target.startsWith(key) : target === key)
    if (opener === undefined || target === 'src/db/redis.ts') return []
    const names = STORE_OPENERS[opener] ?? []
    const imported = (m[1] ?? '').replace(/\btype\s+\w+/g, '').match(/\w+/g) ?? []
    const opening = names === 'all' ? (m[1]?.startsWith('type ') === true ? [] : ['*']) : imported.filter((name) => names.includes(name))
    return opening.map((name) => `${path}: ${name === '*' ? target : `${name} from ${target}`}`)
  })
}

t.test('the folders test/passes.sh runs on SQLite only (STORE_FREE) open no store', async (t) => {
  const folders = storeFreeFolders(readFileSync(join(ROOT, 'test', 'passes.sh'), 'utf8'))
  t.ok(folders.length > 0, `STORE_FREE names ${folders.join(', ')}`)
  for (const folder of folders) t.ok(exists(folder), `${folder} exists`)
  const files = folders.filter(exists).flatMap((folder) => readdirSync(join(ROOT, folder)).filter((name) => name.endsWith('.ts')).map((name) => `${folder}/${name}`))
  t.same(files.flatMap((file) => storeImports(file, readFileSync(join(ROOT, file), 'utf8'))), [])
})

t.test('the check reports a store opened from a STORE_FREE folder (the negative control)', async (t) => {
  t.same(storeFreeFolders("STORE_FREE='config|http'\n"), ['test/src/config', 'test/src/http'])
  t.same(storeFreeFolders('STORE_FREE=\n'), [], 'no list, no folder')
  const at = 'test/src/config/x.test.ts'
  t.same(storeImports(at, "import { tempDir, TEST_SECRET } from '../../helper.js'"), [], 'a data folder is no store')
  t.same(storeImports(at, "import { build, tempDir } from '../../helper.js'"), [`${at}: build from test/helper.ts`])
  t.same(storeImports(at, "import {\n  testConfig,\n  type TestContext\n} from '../../helper.js'"), [`${at}: testConfig from test/helper.ts`], 'over several lines')
  t.same(storeImports(at, "import { openStore } from '../../mail/outbox.js'"), [`${at}: openStore from test/mail/outbox.ts`])
  t.same(storeImports(at, "import { connect } from '../../../src/db/store.js'"), [`${at}: src/db/store.ts`])
  t.same(storeImports(at, "const { buildApp } = await import('../../../src/app.js')"), [`${at}: src/app.ts`], 'a dynamic import')
  t.same(storeImports(at, "import type { Store } from '../../../src/db/store.js'"), [], 'a type opens nothing')
  t.same(storeImports(at, "import { createRedis } from '../../../src/db/redis.js'"), [], 'Redis is the same in both passes')
  t.same(storeImports(at, "import { loadConfig } from '../../../src/config/config.js'"), [])
})
