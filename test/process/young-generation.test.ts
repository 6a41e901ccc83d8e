import { spawnSync } from 'node:child_process'
import t from 'tap'
import { ROOT, TSX } from './server-process.js'

/*
 * The server's start-up holds the young generation's growth (src/runtime/young-generation.ts). A test
 * process has grown it long before any test runs, so a fresh child measures it: its size while
 * held and after the release, each after about 40 MB of objects that survive, as module loading makes.
 */
const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8'
const { releaseYoungGeneration } = await import('./src/runtime/young-generation.ts')
const size = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size
const kept = []
const survivors = () => { for (let i = 0; i < 320_000; i++) kept.push({ i, text: 'object ' + i, list: [i] }) }
const start = size()
survivors()
const held = size()
releaseYoungGeneration()
survivors()
console.log(JSON.stringify({ start, held, released: size(), kept: kept.length }))
`

function measure (nodeArgs: string[] = []): { start: number, held: number, released: number } {
  const child = spawnSync(process.execPath, [...TSX, ...nodeArgs, '--input-type=module', '--eval', CHILD], { cwd: ROOT, encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`)
  return JSON.parse(child.stdout) as { start: number, held: number, released: number }
}

t.test('held, the young generation does not grow however much survives; released, it grows again', async (t) => {
  const { start, held, released } = measure()
  t.equal(held, start, 'not grown while held')
  t.ok(released > held, `grown after the release (${held} → ${released} bytes)`)
})

t.test('an operator\'s own young-generation flag is left alone: it grows from the start', async (t) => {
  const { start, held } = measure(['--max-semi-space-size=16'])
  t.ok(held > start, `grown (${start} → ${held} bytes)`)
})
