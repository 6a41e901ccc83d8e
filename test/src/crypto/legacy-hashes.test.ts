import { pbkdf2Sync, scryptSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import t from 'tap'
import { algorithmOf, parseHash } from '../../../src/crypto/legacy-hashes.js'
import { PasswordHasher } from '../../../src/crypto/passwords.js'
import { argon2Cli, htpasswdBcrypt, pythonHash } from './foreign-hashes.js'

/*
 * The formats of SPEC §18's table, their bounds at every verification, and verification off the
 * event loop: the loop keeps turning while a costly hash is checked, where a synchronous check
 * (the negative control) stops it for as long.
 */

const PASSWORD = 'Loop-Pass-1'
const hasher = PasswordHasher.create({ memoryCost: 1024, timeCost: 1, parallelism: 1 })

/** How many 2 ms timer turns the event loop made while `work` ran, and how long it took. */
async function turnsDuring (work: () => unknown): Promise<{ turns: number, ms: number }> {
  let turns = 0
  const timer = setInterval(() => { turns++ }, 2)
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  clearInterval(timer)
  return { turns, ms }
}

t.test('argon2id, bcrypt, scrypt and PBKDF2 are verified on the thread pool: the event loop keeps turning', async (t) => {
  const costly = [
    { name: 'argon2id m 64 MiB t 2', hash: await argon2Cli(PASSWORD, { type: 'id', memoryKiB: 65536, time: 2, lanes: 1 }) },
    { name: 'bcrypt cost 12', hash: await htpasswdBcrypt(PASSWORD, 12) },
    { name: 'scrypt ln 16', hash: await pythonHash(PASSWORD, { kind: 'scrypt', ln: 16, r: 8, p: 1 }) },
    { name: 'pbkdf2-sha512 300000', hash: await pythonHash(PASSWORD, { kind: 'pbkdf2-sha512', rounds: 300_000 }) }
  ]
  for (const { name, hash } of costly) {
    let ok = false
    const { turns, ms } = await turnsDuring(async () => { ok = await hasher.verify(hash, PASSWORD) })
    t.ok(ok, `${name} verifies`)
    t.ok(ms > 40, `${name} takes a while (${ms.toFixed(0)} ms)`)
    t.ok(turns >= 5, `${name}: the loop turned ${turns} times`)
  }
})

t.test('bcrypt is the native module: what src/crypto/passwords.ts loads has a compiled binding, and no JavaScript bcrypt is a dependency', async (t) => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
  t.ok(pkg.dependencies?.bcrypt, 'bcrypt is a dependency')
  t.notOk(['dependencies', 'devDependencies', 'optionalDependencies'].some((kind) => pkg[kind]?.bcryptjs !== undefined), 'bcryptjs (pure JavaScript, on the event loop) is not')
  t.equal(await hasher.verify(await htpasswdBcrypt(PASSWORD, 4), PASSWORD), true)
  // the module the hasher imported, and the compiled addon it loaded through node-gyp-build
  const require = createRequire(import.meta.url)
  const folder = dirname(require.resolve('bcrypt/package.json'))
  const addons = Object.keys(require.cache).filter((path) => path.startsWith(folder + sep) && path.endsWith('.node'))
  t.equal(addons.length, 1, `one compiled binding loaded: ${addons.join(', ')}`)
})

t.test('the negative control: the same work done synchronously stops the loop', async (t) => {
  const { turns: pbkdf2Turns, ms } = await turnsDuring(() => pbkdf2Sync(PASSWORD, 'salt', 300_000, 64, 'sha512'))
  t.ok(ms > 40, `took ${ms.toFixed(0)} ms`)
  t.equal(pbkdf2Turns, 0, `the loop turned ${pbkdf2Turns} times`)
  const { turns: scryptTurns } = await turnsDuring(() => scryptSync(PASSWORD, 'salt', 32, { N: 2 ** 16, r: 8, p: 1, maxmem: 128 * 1024 * 1024 }))
  t.equal(scryptTurns, 0, `the loop turned ${scryptTurns} times`)
})

t.test('each format is recognised with its parameters; $2y$ is verified as $2b$', async (t) => {
  const bcrypt = await htpasswdBcrypt(PASSWORD, 4)
  t.match(bcrypt, /^\$2y\$04\$/)
  t.match(parseHash(bcrypt), { ok: true, hash: { algorithm: 'bcrypt', text: `$2b$${bcrypt.slice(4)}` } })
  const scrypt = await pythonHash(PASSWORD, { kind: 'scrypt', ln: 4, r: 2, p: 3 })
  t.match(parseHash(scrypt), { ok: true, hash: { algorithm: 'scrypt', cost: 16, blockSize: 2, parallelization: 3 } })
  const django = await pythonHash(PASSWORD, { kind: 'django', rounds: 1200 })
  const parsed = parseHash(django)
  t.match(parsed, { ok: true, hash: { algorithm: 'pbkdf2_sha256', iterations: 1200 } })
  // Django's salt is text: its characters are the salt's bytes, not base64 to decode
  if (parsed.ok && 'salt' in parsed.hash) t.equal(parsed.hash.salt.toString('utf8'), django.split('$')[2])
  t.equal(await hasher.verify(scrypt, PASSWORD), true)
  t.equal(await hasher.verify(scrypt, PASSWORD.toLowerCase()), false)
})

t.test('a key shorter than 16 bytes, or base64 that decodes to nothing, is not a supported format', async (t) => {
  t.same(parseHash('$pbkdf2-sha256$1000$c2FsdA$c2hvcnQ'), { ok: false, reason: 'unsupported' })
  t.same(parseHash('$scrypt$ln=4,r=8,p=1$c$uIrK6HMCGhQ0iNjYHZuzkm4WcvMcJmzwZw+m0wUykoY'), { ok: false, reason: 'unsupported' })
  t.same(parseHash('$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$x'), { ok: false, reason: 'unsupported' })
  // argon2's own minimum salt is 8 bytes: 7 is refused, 8 (the negative control) accepted
  t.same(parseHash('$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbA$uIrK6HMCGhQ0iNjYHZuzkm4WcvMcJmzwZw+m0wUykoY'), { ok: false, reason: 'unsupported' })
  t.equal(parseHash('$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$uIrK6HMCGhQ0iNjYHZuzkm4WcvMcJmzwZw+m0wUykoY').ok, true)
})

t.test('the census label of each stored form', async (t) => {
  const labels = ['', '$2a$10$x', '$argon2id$v', '$argon2i$v', '$argon2d$v', '$scrypt$ln', '$pbkdf2-sha256$1', 'pbkdf2_sha256$1', '$pbkdf2-sha512$1', '$1$md5']
    .map((text) => algorithmOf(text === '$2a$10$x' ? `$2a$10$${'a'.repeat(53)}` : text))
  t.same(labels, ['none', 'bcrypt', 'argon2id', 'argon2i', 'argon2d', 'scrypt', 'pbkdf2_sha256', 'pbkdf2_sha256', 'pbkdf2_sha512', 'other'])
})

t.test('needsRehash: anything but argon2id with today\'s parameters; nothing for no password or a refused hash', async (t) => {
  t.equal(hasher.needsRehash(await hasher.hash(PASSWORD)), false)
  t.equal(hasher.needsRehash(await PasswordHasher.create({ memoryCost: 2048, timeCost: 1, parallelism: 1 }).hash(PASSWORD)), true)
  t.equal(hasher.needsRehash(await htpasswdBcrypt(PASSWORD, 4)), true)
  t.equal(hasher.needsRehash(await pythonHash(PASSWORD, { kind: 'pbkdf2-sha256', rounds: 1000 })), true)
  t.equal(hasher.needsRehash(''), false)
  t.equal(hasher.needsRehash('$1$md5$whatever'), false)
})
