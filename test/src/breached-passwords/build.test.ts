import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import { Blocklist } from '../../../src/breached-passwords/blocklist.js'
import { BadLine, buildBlocklist } from '../../../src/breached-passwords/build.js'
import { tempDir } from '../../helper.js'

const entry = (password: string | Buffer) => createHash('sha1').update(password).digest().subarray(0, 8)
const header = (count: number) => Buffer.concat([Buffer.from('GHBLOCK1'), Buffer.from(count.toString(16).padStart(16, '0'), 'hex')])
/** The file a list of passwords must give: the header, then their entries sorted and unique. */
const expected = (passwords: Array<string | Buffer>) => {
  const entries = [...new Set(passwords.map((p) => entry(p).toString('hex')))].sort()
  return Buffer.concat([header(entries.length), Buffer.from(entries.join(''), 'hex')])
}
/** Text in chunks of `size` bytes, so lines (and characters) straddle the chunks. */
const chunked = (text: string | Buffer, size = 7) => {
  const bytes = Buffer.from(text)
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
  return Readable.from(chunks)
}

t.test('plain: one password a line, CR stripped, empty and over-1024-character lines skipped, sorted and unique', async (t) => {
  const out = join(tempDir(t), 'list.bin')
  const long = 'é'.repeat(1024)
  const text = `Password123!\r\nhunter22\n\n\r\nhunter22\n${long}\n${long}é\n${'x'.repeat(5000)}\n  spaced  \nlast-without-newline`
  const report = await buildBlocklist(chunked(text), out, 'plain')
  t.strictSame(report, { entries: 5, lines: 10, skipped: 4 })
  t.same(readFileSync(out), expected(['Password123!', 'hunter22', long, '  spaced  ', 'last-without-newline']),
    'a line of 1024 two-byte characters is kept, 1025 are not; spaces inside a line are the password\'s')
})

t.test('plain: a line that is not UTF-8 is skipped, as no password the server checks can have its bytes', async (t) => {
  const out = join(tempDir(t), 'list.bin')
  const report = await buildBlocklist(chunked(Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('\ncafé\n')])), out, 'plain')
  t.strictSame(report, { entries: 1, lines: 2, skipped: 1 })
  t.same(readFileSync(out), expected(['café']))
})

t.test('sha1: 40 hex digits a line, either case, optionally :count (HIBP), into the same entries as the plain passwords', async (t) => {
  const dir = tempDir(t)
  const sha1 = (p: string) => createHash('sha1').update(p).digest('hex')
  const text = `${sha1('one').toUpperCase()}:42\r\n${sha1('two')}\n\n${sha1('one')}:7\n${sha1('three').toUpperCase()}`
  t.strictSame(await buildBlocklist(chunked(text, 5), join(dir, 'hibp.bin'), 'sha1'), { entries: 3, lines: 5, skipped: 1 })
  await buildBlocklist(Readable.from(['one\ntwo\nthree\n']), join(dir, 'plain.bin'), 'plain')
  t.same(readFileSync(join(dir, 'hibp.bin')), readFileSync(join(dir, 'plain.bin')))
})

t.test('sha1: a line that is not a SHA-1 refuses the build, naming the line; the file is left as it was and no temporary remains', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'list.bin')
  writeFileSync(out, 'the previous list')
  const sha1 = createHash('sha1').update('one').digest('hex')
  for (const [bad, line] of [['password', 2], [`${sha1}:`, 2], [`${sha1}0`, 2], [`${sha1}:12:3`, 2], [sha1.slice(1), 2], ['x'.repeat(9000), 2]] as const) {
    await t.rejects(buildBlocklist(Readable.from([`${sha1}\n${bad}\n${sha1}\n`]), out, 'sha1'),
      new BadLine(`line ${line}: not a SHA-1 (40 hex digits, optionally :count)`), bad.slice(0, 50))
  }
  t.equal(readFileSync(out, 'utf8'), 'the previous list')
  t.strictSame(readdirSync(dir), ['list.bin'])
})

t.test('an empty input is a list of no entries, which the server opens and finds nothing in', async (t) => {
  const out = join(tempDir(t), 'list.bin')
  t.strictSame(await buildBlocklist(Readable.from([]), out, 'plain'), { entries: 0, lines: 0, skipped: 0 })
  t.same(readFileSync(out), header(0))
  const list = Blocklist.open(out)
  t.teardown(() => { list.close() })
  t.equal(list.has('anything'), false)
})

t.test('a build replaces the file whole: a Blocklist opened on the old one keeps reading the old one', async (t) => {
  const out = join(tempDir(t), 'list.bin')
  await buildBlocklist(Readable.from(['first-password\n']), out, 'plain')
  const old = Blocklist.open(out)
  t.teardown(() => { old.close() })
  await buildBlocklist(Readable.from(['second-password\nthird-password\n']), out, 'plain')
  t.equal(old.has('first-password'), true)
  t.equal(old.has('second-password'), false)
  const fresh = Blocklist.open(out)
  t.teardown(() => { fresh.close() })
  t.equal(fresh.count, 2)
  t.equal(fresh.has('second-password'), true)
})

t.test('a list past the first 65,536 entries grows its table and keeps every entry', async (t) => {
  const out = join(tempDir(t), 'list.bin')
  const listed = Array.from({ length: 70_000 }, (_, i) => `password-${i}`)
  t.strictSame(await buildBlocklist(Readable.from([listed.join('\n')]), out, 'plain'), { entries: 70_000, lines: 70_000, skipped: 0 })
  t.same(readFileSync(out), expected(listed))
})

t.test('a list longer than the entries held in memory is sorted in runs on disk and merged: the same file, no run left behind', async (t) => {
  const dir = tempDir(t)
  // repeats inside a run and across runs, 1,000 distinct passwords
  const passwords = Array.from({ length: 3000 }, (_, i) => `password-${(i * 7919) % 1000}`)
  const text = passwords.join('\n')
  await buildBlocklist(Readable.from([text]), join(dir, 'memory.bin'), 'plain')
  t.same(readFileSync(join(dir, 'memory.bin')), expected(passwords))
  for (const runEntries of [1, 2, 3, 64, 999, 1000, 2999]) {
    const out = join(dir, `runs-${runEntries}.bin`)
    t.strictSame(await buildBlocklist(chunked(text, 100), out, 'plain', runEntries), { entries: 1000, lines: 3000, skipped: 0 }, `runs of ${runEntries}`)
    t.same(readFileSync(out), readFileSync(join(dir, 'memory.bin')), `runs of ${runEntries}: the same bytes`)
  }
  t.strictSame(readdirSync(dir).filter((name) => name.startsWith('.')), [], 'no run and no temporary remains')
})

t.test('a build refused halfway removes the runs it had written', async (t) => {
  const dir = tempDir(t)
  const sha1 = createHash('sha1').update('one').digest('hex')
  const lines = [...Array.from({ length: 50 }, (_, i) => createHash('sha1').update(String(i)).digest('hex')), 'not-a-hash', sha1]
  await t.rejects(buildBlocklist(Readable.from([lines.join('\n')]), join(dir, 'list.bin'), 'sha1', 4), new BadLine('line 51: not a SHA-1 (40 hex digits, optionally :count)'))
  t.strictSame(readdirSync(dir), [])
})

t.test('a rename that fails (the output is a folder) leaves no temporary behind', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'list.bin')
  mkdirSync(out)
  writeFileSync(join(out, 'inside'), '')
  await t.rejects(buildBlocklist(Readable.from(['one\n']), out, 'plain'), { code: 'EISDIR' })
  t.strictSame(readdirSync(dir), ['list.bin'])
})
