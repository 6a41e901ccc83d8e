import { randomBytes } from 'node:crypto'
import { truncateSync, appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import { Blocklist, entryOf, MalformedBlocklist } from '../../../src/breached-passwords/blocklist.js'
import { buildBlocklist } from '../../../src/breached-passwords/build.js'
import { tempDir } from '../../helper.js'

t.test('an entry is the first 8 bytes of the SHA-1 of the UTF-8 bytes', async (t) => {
  // sha1("password") = 5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8; sha1("pässword") of its UTF-8 bytes
  t.equal(entryOf('password').toString('hex'), '5baa61e4c9b93f3f')
  t.equal(entryOf('pässword').toString('hex'), entryOf(Buffer.from('pässword', 'utf8')).toString('hex'))
  t.not(entryOf('pässword').toString('hex'), entryOf(Buffer.from('pässword', 'latin1')).toString('hex'))
})

t.test('the search finds every listed password and none of the others, at every size and shape of search', async (t) => {
  const dir = tempDir(t)
  // the default shape (every entry sampled, up to 16,384), and shapes that leave 8-byte reads and blocks to search
  const shapes = [undefined, { samples: 1, block: 1 }, { samples: 4, block: 2 }, { samples: 16, block: 8 }, { samples: 3, block: 100 }]
  for (const size of [0, 1, 2, 3, 7, 8, 9, 100, 2000]) {
    const listed = Array.from({ length: size }, () => randomBytes(9).toString('base64'))
    const file = join(dir, `list-${size}.bin`)
    await buildBlocklist(Readable.from([listed.join('\n')]), file, 'plain')
    for (const shape of shapes) {
      const list = Blocklist.open(file, shape)
      const name = `${size} entries, ${JSON.stringify(shape ?? 'default')}`
      t.equal(list.count, size)
      t.ok(listed.every((p) => list.has(p)), `${name}: every listed one`)
      t.notOk(Array.from({ length: 200 }, () => randomBytes(9).toString('base64')).some((p) => list.has(p)), `${name}: no other`)
      list.close()
    }
  }
})

t.test('a file cut short after it was opened answers "not listed" past its end, never stale bytes', async (t) => {
  const file = join(tempDir(t), 'list.bin')
  const listed = Array.from({ length: 64 }, (_, i) => `password-${i}`)
  await buildBlocklist(Readable.from([listed.join('\n')]), file, 'plain')
  for (const shape of [{ samples: 1, block: 1 }, { samples: 1, block: 64 }]) {
    const list = Blocklist.open(file, shape)
    truncateSync(file, 16 + 8 * 32)
    t.equal(listed.filter((p) => list.has(p)).length < 64, true, `${JSON.stringify(shape)}: the half cut off is not found`)
    list.close()
    await buildBlocklist(Readable.from([listed.join('\n')]), file, 'plain')
  }
})

t.test('a file that is not a blocklist is refused when opened: its header, or a size other than 16 + 8 × count', async (t) => {
  const dir = tempDir(t)
  const good = join(dir, 'good.bin')
  await buildBlocklist(Readable.from(['one\ntwo\nthree\n']), good, 'plain')
  Blocklist.open(good).close()

  const cases: Array<[string, (file: string) => void, string]> = [
    ['empty', (f) => { writeFileSync(f, '') }, 'does not start with the GHBLOCK1 header (build it with gatehouse passwords build-blocklist)'],
    ['another magic', (f) => { writeFileSync(f, Buffer.concat([Buffer.from('GHBLOCK2'), Buffer.alloc(8)])) }, 'does not start with the GHBLOCK1 header (build it with gatehouse passwords build-blocklist)'],
    ['a text list', (f) => { writeFileSync(f, 'password\n123456\nqwerty\n') }, 'does not start with the GHBLOCK1 header (build it with gatehouse passwords build-blocklist)'],
    ['a header cut short', (f) => { writeFileSync(f, 'GHBLOCK1\0\0\0') }, 'does not start with the GHBLOCK1 header (build it with gatehouse passwords build-blocklist)'],
    ['an entry cut short', (f) => { truncateSync(f, 16 + 8 * 3 - 1) }, 'is 39 bytes where its header\'s count of 3 entries needs 40'],
    ['a byte too many', (f) => { appendFileSync(f, 'x') }, 'is 41 bytes where its header\'s count of 3 entries needs 40'],
    ['a count past the file', (f) => { writeFileSync(f, Buffer.concat([Buffer.from('GHBLOCK1'), Buffer.from('ffffffffffffffff', 'hex')])) }, 'is 16 bytes where its header\'s count of 18446744073709551615 entries needs 147573952589676412936']
  ]
  for (const [name, make, message] of cases) {
    const file = join(dir, `${name}.bin`)
    await buildBlocklist(Readable.from(['one\ntwo\nthree\n']), file, 'plain')
    make(file)
    t.throws(() => Blocklist.open(file), new MalformedBlocklist(message), name)
  }
  t.throws(() => Blocklist.open(join(dir, 'missing.bin')), { code: 'ENOENT' })
  t.throws(() => Blocklist.open(dir), { code: 'EISDIR' })
})
