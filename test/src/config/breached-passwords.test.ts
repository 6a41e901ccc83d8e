import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import { buildBlocklist } from '../../../src/breached-passwords/build.js'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { tempDir } from '../../helper.js'

const load = (values: Record<string, unknown>) => loadConfig({ fromEnvironment: false, values: { JWT_SECRET: 'x'.repeat(32), DATA_DIR: tempDir(t), ...values } })

t.test('BREACHED_PASSWORDS_FILE is unset by default: no list', async (t) => {
  t.equal(load({}).breachedPasswords, undefined)
})

t.test('a well-formed file is taken, with its count', async (t) => {
  const file = join(tempDir(t), 'list.bin')
  await buildBlocklist(Readable.from(['one\ntwo\n']), file, 'plain')
  t.strictSame(load({ BREACHED_PASSWORDS_FILE: file }).breachedPasswords, { file, count: 2 })
})

t.test('an unreadable or malformed file stops the start, naming the setting', async (t) => {
  const dir = tempDir(t)
  const text = join(dir, 'list.txt')
  writeFileSync(text, 'password\n123456\n')
  const cut = join(dir, 'cut.bin')
  await buildBlocklist(Readable.from(['one\ntwo\n']), cut, 'plain')
  writeFileSync(cut, Buffer.concat([Buffer.from('GHBLOCK1'), Buffer.from('0000000000000002', 'hex'), Buffer.alloc(15)]))
  const cases: Array<[string, string]> = [
    [join(dir, 'missing.bin'), 'cannot be read (ENOENT)'],
    [dir, 'cannot be read (EISDIR)'],
    [text, 'does not start with the GHBLOCK1 header (build it with gatehouse passwords build-blocklist)'],
    [cut, 'is 31 bytes where its header\'s count of 2 entries needs 32']
  ]
  for (const [file, why] of cases) {
    t.throws(() => load({ BREACHED_PASSWORDS_FILE: file }), new ConfigError(`Invalid configuration: BREACHED_PASSWORDS_FILE ${file} ${why}`), why)
  }
  t.throws(() => load({ BREACHED_PASSWORDS_FILE: '' }), new ConfigError('Invalid configuration: BREACHED_PASSWORDS_FILE must NOT have fewer than 1 characters'))
})
