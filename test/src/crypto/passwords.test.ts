import * as argon2 from 'argon2'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { dummyHash, PasswordHasher } from '../../../src/crypto/passwords.js'
import { build, buildFrom, createUser, PASSWORD, testConfig } from '../../helper.js'

/*
 * Password storage: argon2id, re-hashed at the next successful login when the configured
 * parameters have changed, and an unknown email answered exactly like a wrong password.
 */

const INVALID_CREDENTIALS = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }
const ARGON2ID = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/

async function storedHash (app: FastifyInstance, email: string): Promise<string> {
  const user = await app.store.users.findByEmail(email)
  if (user === undefined) throw new Error(`no user ${email}`)
  return user.passwordHash
}

async function loginAttempt (app: FastifyInstance, email: string, password: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } })
}

t.test('passwords are stored as argon2id with the configured parameters', async (t) => {
  const app = await build(t, { ARGON2_MEMORY_COST: 1024, ARGON2_TIME_COST: 1, ARGON2_PARALLELISM: 1 })
  const user = await createUser(app)
  const hash = await storedHash(app, user.email)
  t.match(hash, ARGON2ID)
  t.equal(hash.split('$')[3], 'm=1024,t=1,p=1')
  t.ok(await argon2.verify(hash, PASSWORD))
  t.notOk(hash.includes(PASSWORD))
})

t.test('a hash made with older argon2 parameters is re-hashed at the next successful login, not at a failed one', async (t) => {
  const before = testConfig(t, { ARGON2_MEMORY_COST: 1024 })
  const first = await buildFrom(t, before)
  const user = await createUser(first)
  const old = await storedHash(first, user.email)
  t.match(old, /\$m=1024,/)
  // a login under the parameters the hash was made with leaves it alone
  t.equal((await loginAttempt(first, user.email, user.password)).statusCode, 200)
  t.equal(await storedHash(first, user.email), old)
  await first.close()

  const second = await buildFrom(t, testConfig(t, { DATA_DIR: before.dataDir, ARGON2_MEMORY_COST: 2048 }))
  const failed = await loginAttempt(second, user.email, 'Wrong-Password-1')
  t.equal(failed.statusCode, 401)
  t.same(failed.json(), INVALID_CREDENTIALS)
  t.equal(await storedHash(second, user.email), old, 'a failed login does not re-hash')

  const ok = await loginAttempt(second, user.email, user.password)
  t.equal(ok.statusCode, 200)
  const rehashed = await storedHash(second, user.email)
  t.not(rehashed, old)
  t.match(rehashed, ARGON2ID)
  t.equal(rehashed.split('$')[3], 'm=2048,t=1,p=1')
  t.ok(await argon2.verify(rehashed, user.password), 'the new hash still verifies the password')
  t.notOk(await argon2.verify(rehashed, 'Wrong-Password-1'))

  // and the new hash serves the next login, unchanged
  t.equal((await loginAttempt(second, user.email, user.password)).statusCode, 200)
  t.equal(await storedHash(second, user.email), rehashed)
})

t.test('a re-hash at login never overwrites a password changed after the login read the user', async (t) => {
  const before = testConfig(t, { ARGON2_MEMORY_COST: 1024 })
  const first = await buildFrom(t, before)
  const user = await createUser(first)
  await first.close()
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: before.dataDir, ARGON2_MEMORY_COST: 2048 }))
  const changed = await argon2.hash('New-Password-2', { type: argon2.argon2id, memoryCost: 2048, timeCost: 1, parallelism: 1 })
  const { users } = app.store
  const findByEmail = users.findByEmail.bind(users)
  // a password change commits just after the login has read the user (the race's window)
  t.intercept(users, 'findByEmail', {
    value: async (email: string) => {
      const read = await findByEmail(email)
      if (read !== undefined) await users.setPasswordHash(read.id, changed, new Date().toISOString())
      return read
    }
  })
  const res = await loginAttempt(app, user.email, user.password)
  // the password it verified was replaced before its session was stored: no session
  t.equal(res.statusCode, 401, 'the login is refused: the password it verified is no longer the password')
  t.same(res.json(), INVALID_CREDENTIALS)
  const stored = (await users.findById(user.id))?.passwordHash
  t.equal(stored, changed, 'the new password is kept, not replaced by a re-hash of the old one')
})

t.test('POST /auth/login with an unknown email answers exactly like a wrong password', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const unknown = await loginAttempt(app, 'nobody-here@example.com', user.password)
  const wrong = await loginAttempt(app, user.email, 'Wrong-Password-1')
  for (const res of [unknown, wrong]) {
    t.equal(res.statusCode, 401)
    t.same(res.json(), INVALID_CREDENTIALS)
  }
  // the same headers; only the clock and the per-address rate-limit counters move between two requests
  t.same(Object.keys(unknown.headers).sort(), Object.keys(wrong.headers).sort())
  const stable = (res: LightMyRequestResponse) =>
    Object.entries(res.headers).filter(([name]) => name !== 'date' && !name.startsWith('ratelimit'))
  t.same(stable(unknown), stable(wrong))
  t.equal(unknown.body, wrong.body)
})

t.test('POST /auth/login with an unknown email and the dummy hash\'s own password is refused', async (t) => {
  // the unknown-email path verifies against a dummy hash; matching it must never sign anyone in
  const app = await build(t)
  const res = await loginAttempt(app, 'nobody-here@example.com', 'gatehouse-dummy-password')
  t.equal(res.statusCode, 401)
  t.same(res.json(), INVALID_CREDENTIALS)
})

t.test('the dummy hash is a well-formed argon2id hash with today\'s parameters, so verifying it costs a real verify', async (t) => {
  const parameters = { memoryCost: 1024, timeCost: 3, parallelism: 2 }
  const dummy = dummyHash(parameters)
  t.match(dummy, ARGON2ID)
  t.equal(argon2.needsRehash(dummy, parameters), false)
  // a malformed string would make argon2 throw at once instead of hashing
  t.equal(await argon2.verify(dummy, 'gatehouse-dummy-password'), false)
  t.not(dummyHash(parameters), dummy, 'a fresh salt and digest each time')
})

t.test('PasswordHasher verifies real hashes, refuses without a hash and on a corrupt one, and spots old parameters', async (t) => {
  const hasher = PasswordHasher.create({ memoryCost: 1024, timeCost: 1, parallelism: 1 })
  const hash = await hasher.hash(PASSWORD)
  t.match(hash, ARGON2ID)
  t.equal(await hasher.verify(hash, PASSWORD), true)
  t.equal(await hasher.verify(hash, 'Wrong-Password-1'), false)
  t.equal(await hasher.verify(undefined, 'gatehouse-dummy-password'), false)
  t.equal(await hasher.verify(undefined, PASSWORD), false)
  t.equal(await hasher.verify('not-a-hash', PASSWORD), false)
  t.equal(hasher.needsRehash(hash), false)
  t.equal(hasher.needsRehash(await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 512, timeCost: 1, parallelism: 1 })), true)
  t.equal(hasher.needsRehash(await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 1024, timeCost: 2, parallelism: 1 })), true)
})

t.test('a user with no password (\'\') never signs in, and costs a dummy argon2id verification as a wrong password does', async (t) => {
  const hasher = PasswordHasher.create({ memoryCost: 16384, timeCost: 2, parallelism: 1 })
  const real = await hasher.hash(PASSWORD)
  const median = async (hash: string | undefined, password: string): Promise<number> => {
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      t.equal(await hasher.verify(hash, password), false)
      times.push(performance.now() - started)
    }
    return times.sort((a, b) => a - b)[2] ?? 0
  }
  for (const password of ['', PASSWORD, 'x']) t.equal(await hasher.verify('', password), false, `'' does not match "${password}"`)
  const wrong = await median(real, 'Wrong-Password-1')
  const none = await median('', PASSWORD)
  const unsupported = await median('$1$md5$crypt', PASSWORD)
  // the same argon2id work, give or take a loaded machine; returning at once would take well under a millisecond
  t.ok(none > wrong * 0.4, `no password ${none.toFixed(1)} ms against a wrong password ${wrong.toFixed(1)} ms`)
  t.ok(unsupported > wrong * 0.4, `an unsupported hash ${unsupported.toFixed(1)} ms`)
  t.ok(wrong > 3, 'the comparison is meaningful: a real verification takes milliseconds')
})
