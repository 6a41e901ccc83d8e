import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import { BreachedPasswords } from '../../../src/breached-passwords/breached-passwords.js'
import { buildBlocklist } from '../../../src/breached-passwords/build.js'
import { ConfigError } from '../../../src/errors.js'
import { ServiceEvents } from '../../../src/events.js'
import { tempDir } from '../../helper.js'

t.test('refuses() is true for a listed password and reports each refusal as an event; an unlisted one is not', async (t) => {
  const file = join(tempDir(t), 'list.bin')
  await buildBlocklist(Readable.from(['Breached-Pass-1\n']), file, 'plain')
  const events = new ServiceEvents()
  let refusals = 0
  events.on('breached_password', () => { refusals++ })
  const list = BreachedPasswords.open(file, events)
  t.teardown(() => { list.close() })
  t.equal(list.count, 1)
  t.equal(list.refuses('Breached-Pass-1'), true)
  t.equal(list.refuses('Breached-Pass-2'), false)
  t.equal(list.refuses('Breached-Pass-1'), true)
  t.equal(refusals, 2)
})

t.test('a file gone since the settings were read is a ConfigError naming the setting', async (t) => {
  const file = join(tempDir(t), 'list.bin')
  await buildBlocklist(Readable.from(['one\n']), file, 'plain')
  rmSync(file)
  t.throws(() => BreachedPasswords.open(file, new ServiceEvents()), new ConfigError(`Invalid configuration: BREACHED_PASSWORDS_FILE ${file} cannot be read (ENOENT)`))
})
