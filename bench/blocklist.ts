import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Readable } from 'node:stream'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { CreateUserRequest } from '../schemas/users.js'
import { BreachedPasswords } from '../src/breached-passwords/breached-passwords.js'
import { buildBlocklist } from '../src/breached-passwords/build.js'
import { ServiceEvents } from '../src/events.js'
import { addRules, type BreachedCheck } from '../src/validation/index.js'

/*
 * The breached-password blocklist at 10 million entries (docs/breached-passwords.md): builds the
 * file in a temporary folder (removed at the end, never committed) with the real builder, then
 * times one lookup (listed and not) and what the check adds to a request's validation: the body
 * of POST /api/users validated by Ajv with the rules of plugins/validation.ts, with and without the
 * list. `npm run bench:blocklist [entries] [lookups]`. The searches run in a process of their
 * own, so its memory is the server's (the file open), not the builder's.
 */

const searching = process.argv[2] === '--search'
const [entries, lookups] = (searching ? process.argv.slice(4) : process.argv.slice(2)).map(Number)
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`
const listed = (i: number) => `listed-password-${i}`

/** `count` lines, 10,000 to a chunk. */
function * lines (count: number): Generator<string> {
  for (let start = 0; start < count; start += 10_000) {
    const end = Math.min(start + 10_000, count)
    yield Array.from({ length: end - start }, (_, k) => listed(start + k)).join('\n') + '\n'
  }
}

/** Per-call times (µs) of `fn` over `inputs`: mean, median, 99th percentile. */
function timed (inputs: string[], fn: (input: string) => unknown): { mean: number, p50: number, p99: number } {
  for (const input of inputs.slice(0, 2000)) fn(input)
  const times = new Float64Array(inputs.length)
  const start = process.hrtime.bigint()
  for (let i = 0; i < inputs.length; i++) {
    const before = process.hrtime.bigint()
    fn(inputs[i] ?? '')
    times[i] = Number(process.hrtime.bigint() - before) / 1000
  }
  const mean = Number(process.hrtime.bigint() - start) / 1000 / inputs.length
  times.sort()
  return { mean, p50: times[Math.floor(times.length / 2)] ?? 0, p99: times[Math.floor(times.length * 0.99)] ?? 0 }
}
const shown = ({ mean, p50, p99 }: { mean: number, p50: number, p99: number }) => `mean ${mean.toFixed(2)} µs, p50 ${p50.toFixed(2)} µs, p99 ${p99.toFixed(2)} µs`

async function build (count: number, searches: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-blocklist-'))
  try {
    const file = join(dir, 'breached.bin')
    const started = Date.now()
    const report = await buildBlocklist(Readable.from(lines(count)), file, 'plain')
    process.stdout.write(`build: ${report.entries} entries from ${report.lines} lines in ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
      `file ${mib(statSync(file).size)}, the builder's peak RSS ${mib(process.resourceUsage().maxRSS * 1024)}\n`)
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--search', file, String(count), String(searches)], { stdio: 'inherit' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function search (file: string, count: number, searches: number): void {
  const rssBefore = process.memoryUsage().rss
  const opening = Date.now()
  const list = BreachedPasswords.open(file, new ServiceEvents())
  process.stdout.write(`open (header, size, the 16,384 samples): ${Date.now() - opening} ms\n`)
  const rssOpen = process.memoryUsage().rss
  const random = (prefix: (i: number) => string) => Array.from({ length: searches }, () => prefix(Math.floor(Math.random() * count)))
  const hits = random(listed)
  const misses = random((i) => `not-listed-${i}`)
  process.stdout.write(`lookup, listed:     ${shown(timed(hits, (p) => list.refuses(p)))}\n`)
  process.stdout.write(`lookup, not listed: ${shown(timed(misses, (p) => list.refuses(p)))}\n`)
  if (!hits.every((p) => list.refuses(p)) || misses.some((p) => list.refuses(p))) throw new Error('a lookup answered wrong')
  process.stdout.write(`RSS: ${mib(rssBefore)} before the open, ${mib(rssOpen)} once open, ${mib(process.memoryUsage().rss)} with the inputs made and after ${4 * searches} lookups (the file is ${mib(statSync(file).size)})\n`)

  // POST /api/users' body as plugins/validation.ts validates it, without and with the list
  const validator = (check: BreachedCheck | undefined) => addRules(addFormats.default(new Ajv({ allErrors: true, strict: true, strictTypes: false, coerceTypes: false }), ['uuid', 'date-time', 'uri']), () => check).compile(CreateUserRequest)
  const bodies = new Map(misses.map((password) => [password, { email: 'new.person@example.com', name: 'New Person', password }]))
  const plain = validator(undefined)
  const checked = validator(list)
  const without = timed(misses, (p) => plain(bodies.get(p)))
  const withList = timed(misses, (p) => checked(bodies.get(p)))
  process.stdout.write(`validation without the list: ${shown(without)}\nvalidation with the list:    ${shown(withList)}\n`)
  process.stdout.write(`added to a request: ${(withList.p50 - without.p50).toFixed(2)} µs at p50, ${(withList.p99 - without.p99).toFixed(2)} µs at p99, ${(withList.mean - without.mean).toFixed(2)} µs mean (goal: under 100 µs)\n`)
  list.close()
}

if (searching) search(process.argv[3] ?? '', entries ?? 0, lookups ?? 0)
else await build(entries ?? 10_000_000, lookups ?? 200_000)
