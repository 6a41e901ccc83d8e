import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { estimateEntropy } from '../../../src/config/secret-strength.js'
import { tempDir, type TestContext } from '../../helper.js'
import { startServer } from '../../process/server-process.js'

function load (values: Record<string, unknown>) {
  return loadConfig({ fromEnvironment: false, values })
}

/** A data folder holding a development secret file with this content and mode. */
function secretFile (t: TestContext, content: string, mode = 0o600): { dir: string, file: string } {
  const dir = tempDir(t)
  const file = join(dir, 'jwt-secret')
  writeFileSync(file, content, { mode })
  chmodSync(file, mode)
  return { dir, file }
}

const STRONG = 'k3Yq9-Zt1_vB7xW2mN8pL4sR6dF0hJ5c'

t.test('production refuses a JWT_SECRET with fewer than 8 distinct characters, naming JWT_SECRET', async (t) => {
  const dir = tempDir(t)
  const refused = new ConfigError('Invalid configuration: JWT_SECRET must contain at least 8 distinct characters')
  t.throws(() => load({ APP_ENV: 'production', DATA_DIR: dir, JWT_SECRET: 'x'.repeat(32) }), refused)
  t.throws(() => load({ APP_ENV: 'production', DATA_DIR: dir, JWT_SECRET: 'abcdefg'.repeat(5) }), refused)
  // the negative control: a generated secret passes
  t.equal(load({ APP_ENV: 'production', DATA_DIR: dir, JWT_SECRET: STRONG }).jwtSecret, STRONG)
})

const GENERATE = 'generate one with `openssl rand -base64 32` or ' +
  '`node -e "console.log(require(\'node:crypto\').randomBytes(32).toString(\'base64\'))"`'

/** Secrets of 32 bytes or more and 8 distinct characters that a guesser who knows how people choose finds all the same. */
const PATTERNED = [
  'abcdefgh'.repeat(4), // a repeated block
  'abcd1234'.repeat(4),
  'Summer2024!Summer2024!Summer2024!',
  'P@ssw0rd1!'.repeat(4),
  'qwertyuiopasdfghjklzxcvbnm123456', // keyboard runs
  '1qaz2wsx!QAZ@WSX1qaz2wsx!QAZ@WSX',
  '!@#$%^&*()_+qwertyuiop{}|asdfghjkl',
  '0123456789abcdefghijklmnopqrstuvwxyz', // sequences
  'zyxwvutsrqponmlkjihgfedcba9876543210',
  'my-company-jwt-secret-for-prod!!', // sentences of words
  'correct horse battery staple is my secret key',
  'ThisIsTheSecretKeyForOurProductionServer',
  'please-change-this-secret-before-going-to-production',
  'test-secret-that-is-at-least-32-bytes-long!!',
  'a-production-secret-of-48-bytes-XYZ0123456789!?',
  'gatehouse-jwt-signing-key-2024-gatehouse-jwt-signing-key-2024'
]

t.test('production refuses a patterned or memorable JWT_SECRET (an estimated entropy under 128 bits), naming JWT_SECRET and how to generate one', async (t) => {
  const dir = tempDir(t)
  for (const secret of PATTERNED) {
    t.ok(estimateEntropy(secret) < 128, `${secret}: ${estimateEntropy(secret).toFixed(0)} bits`)
    t.throws(() => load({ APP_ENV: 'production', DATA_DIR: dir, JWT_SECRET: secret }), new ConfigError(
      `Invalid configuration: JWT_SECRET looks patterned or made of words (an estimated ${Math.floor(estimateEntropy(secret))} bits ` +
      `of entropy, at least 128 required); ${GENERATE}`), secret)
  }
  // development takes a developer's own JWT_SECRET of 32 bytes as it is
  t.equal(load({ DATA_DIR: dir, JWT_SECRET: PATTERNED[0] }).jwtSecret, PATTERNED[0])
})

t.test('production takes real generated secrets: 32 random bytes as base64, base64url or hex, and longer', async (t) => {
  const dir = tempDir(t)
  const generated = Array.from({ length: 50 }, () => [
    randomBytes(32).toString('base64'), // openssl rand -base64 32
    randomBytes(32).toString('base64url'),
    randomBytes(32).toString('hex'), // openssl rand -hex 32
    randomBytes(48).toString('base64url'), // what development generates
    randomBytes(24).toString('base64'),
    randomBytes(64).toString('hex')
  ]).flat()
  const openssl = execFileSync('openssl', ['rand', '-base64', '32'], { encoding: 'utf8' }).trim()
  for (const secret of [...generated, openssl, STRONG, 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp']) {
    t.equal(load({ APP_ENV: 'production', DATA_DIR: dir, JWT_SECRET: secret }).jwtSecret, secret, `${secret}: ${estimateEntropy(secret).toFixed(0)} bits`)
  }
})

t.test('the generated development secret file holds exactly the secret, no newline', async (t) => {
  const dir = tempDir(t)
  const config = load({ DATA_DIR: dir })
  const file = join(dir, 'jwt-secret')
  t.equal(readFileSync(file, 'utf8'), config.jwtSecret)
  t.equal(statSync(file).mode & 0o777, 0o600)
})

t.test('a development secret file written by an older version (one trailing newline) is used without it and rewritten', async (t) => {
  const { dir, file } = secretFile(t, STRONG + '\n')
  t.equal(load({ DATA_DIR: dir }).jwtSecret, STRONG)
  t.equal(readFileSync(file, 'utf8'), STRONG, 'the file now holds exactly the key')
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.equal(load({ DATA_DIR: dir }).jwtSecret, STRONG, 'and reads the same the next time')
})

t.test('an empty development secret file stops the start, naming the file', async (t) => {
  const { dir, file } = secretFile(t, '')
  t.throws(() => load({ DATA_DIR: dir }),
    new ConfigError(`Invalid configuration: the development secret file ${file} is empty; delete it to generate a new one`))
})

t.test('a development secret file weaker than the production rule stops the start, naming the file', async (t) => {
  for (const content of ['secret', 'secret\n', 'x'.repeat(32), 'abcdefg'.repeat(5), 'abcdefgh'.repeat(4), 'my-company-jwt-secret-for-prod!!']) {
    const { dir, file } = secretFile(t, content)
    t.throws(() => load({ DATA_DIR: dir }), new ConfigError(
      `Invalid configuration: the development secret file ${file} is weaker than JWT_SECRET allows ` +
      '(at least 32 bytes, 8 distinct characters and an estimated 128 bits of entropy); delete it to generate a new one'), JSON.stringify(content))
  }
})

t.test('a development secret file that other users can read stops the start, naming the file', async (t) => {
  for (const mode of [0o644, 0o640, 0o604, 0o660]) {
    const { dir, file } = secretFile(t, STRONG, mode)
    t.throws(() => load({ DATA_DIR: dir }), new ConfigError(
      `Invalid configuration: the development secret file ${file} is open to other users ` +
      `(mode 0${mode.toString(8)}); delete it to generate a new one`), mode.toString(8))
  }
  // the negative control: the same content with mode 0600 (and 0400) is used
  for (const mode of [0o600, 0o400]) {
    const { dir } = secretFile(t, STRONG, mode)
    t.equal(load({ DATA_DIR: dir }).jwtSecret, STRONG, mode.toString(8))
  }
})

t.test('the server refuses an empty development secret file with one line, no stack trace', async (t) => {
  const { dir, file } = secretFile(t, '')
  const server = startServer({ DATA_DIR: dir, PORT: '0' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const exit = await server.exited
  t.equal(exit.code, 1)
  t.equal(server.stderr(), `gatehouse: Invalid configuration: the development secret file ${file} is empty; delete it to generate a new one\n`)
})
