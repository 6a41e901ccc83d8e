import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import threadPool from '../../../src/runtime/thread-pool.cjs'
import { tempDir } from '../../helper.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')

t.test('the default pool has Node\'s four threads, but no more than there are cores', async (t) => {
  t.same([1, 2, 3, 4, 8, 64].map((cores) => threadPool.defaultThreadPoolSize(cores)), [1, 2, 3, 4, 4, 4])
})

/**
 * The entry as `npm start` runs it, compiled to CommonJS beside an ES module standing in for the
 * server, which reports how many threads the process has: libuv's pool has started by then (the
 * ESM loader read the module with it), so runs that differ only in the pool's size differ by it.
 */
function entryWithProbe (dir: string): string {
  const src = join(dir, 'src')
  mkdirSync(join(src, 'runtime'), { recursive: true })
  for (const name of ['start', 'runtime/thread-pool']) {
    const source = readFileSync(join(ROOT, 'src', `${name}.cts`), 'utf8')
    // as tsc compiles it (NodeNext): CommonJS that keeps the dynamic import of the server
    const { outputText } = ts.transpileModule(source, { fileName: `${name}.cts`, compilerOptions: { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022 } })
    writeFileSync(join(src, `${name}.cjs`), outputText)
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(src, 'server.js'), `import { readdirSync } from 'node:fs'
process.stdout.write(String(readdirSync('/proc/self/task').length))
`)
  return join(src, 'start.cjs')
}

t.test('npm start\'s entry sizes the pool before any ES module loads, and an operator\'s UV_THREADPOOL_SIZE wins', async (t) => {
  const entry = entryWithProbe(tempDir(t))
  const threads = (env: Record<string, string>) => {
    // through env -i: tap gives its children a NODE_OPTIONS --import (coverage), and an ES module
    // loaded first would start the pool before the entry runs, as it would for any operator's
    const vars = Object.entries({ PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }).map(([key, value]) => `${key}=${value}`)
    const result = spawnSync('env', ['-i', ...vars, process.execPath, entry], { encoding: 'utf8', timeout: 20_000 })
    t.equal(result.status, 0, result.stderr)
    return Number(result.stdout)
  }
  const one = threads({ UV_THREADPOOL_SIZE: '1' })
  t.equal(threads({}) - one, threadPool.defaultThreadPoolSize() - 1, 'unset: the default size')
  t.equal(threads({ UV_THREADPOOL_SIZE: '6' }) - one, 5, 'set: the operator\'s size')
})
