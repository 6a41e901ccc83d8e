import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { parseHash } from '../../../../src/crypto/legacy-hashes.js'
import { argon2Cli, htpasswdBcrypt, pythonHash } from '../../../src/crypto/foreign-hashes.js'
import { authHeader, changePassword, createUser, login, tempDir } from '../../../helper.js'
import { BAD_LOGIN } from '../../../patterns.js'
import { census, importer, postImport, signIn, storedHash } from './support.js'
import { alertCode, PageClient, portalValues } from '../../portal/support.js'
import { PASSKEYS_ON } from '../../passkeys/support.js'
import { enrolledUser, oathtool, post, totpApp } from '../../auth/two-factor/support.js'

/*
 * routes/api/users-import.ts with hashes made by tools nobody here wrote (test/src/crypto/foreign-hashes.ts):
 * each imported user signs in with the original password, fails with a wrong one, and is rehashed
 * to today's argon2id once (src/accounts/password-check.ts), which the census gauge and the audit
 * trail show; so does every other check of the password (step-up re-authentication, TOTP changes).
 */

const PASSWORD = 'Orig-Passwort-ü1'
const ZERO = { argon2id: 0, argon2i: 0, argon2d: 0, bcrypt: 0, scrypt: 0, pbkdf2_sha256: 0, pbkdf2_sha512: 0, none: 0 }
const ARGON2ID_TODAY = /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/

/**
 * `hash` in place of the user's hash, as a copied database could hold it, by compare-and-swap on
 * the hash there (which, unlike a password change, leaves the user's tokens valid).
 */
async function putBack (app: FastifyInstance, email: string, hash: string): Promise<void> {
  const user = await app.store.users.findByEmail(email)
  await app.store.users.setPasswordHash(user?.id ?? '', hash, new Date().toISOString(), user?.passwordHash)
}

/** The password_rehashed events as [user, actor, old algorithm, outcome]. */
async function rehashes (app: FastifyInstance): Promise<unknown[][]> {
  const { entries } = await app.auditTrail.page({ event: 'password_rehashed' }, 1, 10)
  return entries.map((e) => [e.userId, e.actorId, e.detail, e.outcome])
}

const FORMATS: Array<{ algorithm: string, make: () => Promise<string>, password?: string }> = [
  { algorithm: 'bcrypt', make: async () => await htpasswdBcrypt(PASSWORD, 5) },
  // Supabase's form, `$2a$` (docs/migrating.md): htpasswd's `$2y$` under the other name. python3's
  // bcrypt module is not installed here; for an ASCII password $2a$, $2b$ and $2y$ are one algorithm
  { algorithm: 'bcrypt', make: async () => (await htpasswdBcrypt('Supabase-Pass-1', 10)).replace(/^\$2y\$/, '$2a$'), password: 'Supabase-Pass-1' },
  { algorithm: 'argon2id', make: async () => await argon2Cli(PASSWORD, { type: 'id', memoryKiB: 2048, time: 2, lanes: 2 }) },
  { algorithm: 'argon2i', make: async () => await argon2Cli(PASSWORD, { type: 'i', memoryKiB: 1024, time: 3, lanes: 1, version: '10' }) },
  { algorithm: 'argon2d', make: async () => await argon2Cli(PASSWORD, { type: 'd', memoryKiB: 1024, time: 2, lanes: 1 }) },
  { algorithm: 'scrypt', make: async () => await pythonHash(PASSWORD, { kind: 'scrypt', ln: 10, r: 8, p: 1 }) },
  { algorithm: 'pbkdf2_sha256', make: async () => await pythonHash(PASSWORD, { kind: 'pbkdf2-sha256', rounds: 1000 }) },
  { algorithm: 'pbkdf2_sha512', make: async () => await pythonHash(PASSWORD, { kind: 'pbkdf2-sha512', rounds: 2000 }) },
  // Django's own form, counted as PBKDF2-SHA256
  { algorithm: 'pbkdf2_sha256', make: async () => await pythonHash(PASSWORD, { kind: 'django', rounds: 1000 }) }
]

for (const [i, { algorithm, make, password = PASSWORD }] of FORMATS.entries()) {
  t.test(`an imported ${algorithm} hash (${i}) signs in with the original password, not a wrong one, and is rehashed once`, async (t) => {
    const imp = await importer(t)
    const { app } = imp
    const hash = await make()
    const email = `moved-${i}@example.com`
    const res = await postImport(imp, { users: [{ email, name: 'Moved In', password_hash: hash }] })
    t.equal(res.statusCode, 200)
    const id = await app.store.users.findByEmail(email).then((u) => u?.id)
    t.same(res.json(), { created: 1, refused: 0, results: [{ index: 0, id }] })
    t.equal(await storedHash(app, email), hash, 'stored exactly as given')
    const before = await census(app)
    // the superuser signed in with today's argon2id
    t.same(before, { ...ZERO, argon2id: 1, [algorithm]: algorithm === 'argon2id' ? 2 : 1 }, `the gauge counts one ${algorithm} user`)

    const wrong = await signIn(app, email, `${password}x`)
    t.equal(wrong.statusCode, 401)
    t.same(wrong.json(), BAD_LOGIN)
    t.equal(await storedHash(app, email), hash, 'a failed sign-in rehashes nothing')

    const first = await signIn(app, email, password)
    t.equal(first.statusCode, 200)
    const rehashed = await storedHash(app, email) ?? ''
    t.match(rehashed, ARGON2ID_TODAY, 'today\'s argon2id, parameters included')
    t.same(await census(app), { ...ZERO, argon2id: 2 }, 'the gauge moves it to argon2id')

    const second = await signIn(app, email, password)
    t.equal(second.statusCode, 200, 'the new hash signs in')
    t.equal(await storedHash(app, email), rehashed, 'and is not rehashed again')
    t.same(await rehashes(app), [[id, id, algorithm, 'success']], 'one password_rehashed, naming the old algorithm')
  })
}

t.test('change-password checks the current password against a legacy hash', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const email = 'legacy@example.com'
  const hash = await pythonHash(PASSWORD, { kind: 'django', rounds: 1000 })
  t.equal((await postImport(imp, { users: [{ email, name: 'Legacy User', password_hash: hash }] })).statusCode, 200)
  const { access_token: token } = await login(app, { email, password: PASSWORD })
  // put the legacy hash back: the change must verify the Django hash itself
  await putBack(app, email, hash)
  const wrong = await changePassword(app, token, `${PASSWORD}x`, 'New-Password-2')
  t.equal(wrong.statusCode, 400, 'a wrong current password is refused')
  t.same(wrong.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  t.equal((await changePassword(app, token, PASSWORD, 'New-Password-2')).statusCode, 200)
  t.match(await storedHash(app, email), ARGON2ID_TODAY)
  t.equal((await signIn(app, email, 'New-Password-2')).statusCode, 200)
})

t.test('a step-up re-authentication with the password (POST /auth/passkeys/register/options) rehashes a legacy hash once', async (t) => {
  const imp = await importer(t, PASSKEYS_ON)
  const { app } = imp
  const user = await createUser(app, { email: 'stepup@example.com', password: PASSWORD })
  const { access_token: token } = await login(app, user)
  const legacy = await htpasswdBcrypt(PASSWORD, 4)
  await putBack(app, user.email, legacy)
  const wrong = await post(app, '/auth/passkeys/register/options', { password: `${PASSWORD}x` }, token)
  t.equal(wrong.statusCode, 400)
  t.same(wrong.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  t.equal(await storedHash(app, user.email), legacy, 'a wrong password rehashes nothing')
  const right = await post(app, '/auth/passkeys/register/options', { password: PASSWORD }, token)
  t.equal(right.statusCode, 200)
  const rehashed = await storedHash(app, user.email)
  t.match(rehashed, ARGON2ID_TODAY)
  t.same(await rehashes(app), [[user.id, user.id, 'bcrypt', 'success']], 'one password_rehashed, naming the old algorithm')
  t.equal((await post(app, '/auth/passkeys/register/options', { password: PASSWORD }, token)).statusCode, 200, 'the new hash re-authenticates')
  t.equal(await storedHash(app, user.email), rehashed, 'and is not rehashed again')
})

t.test('the password of a TOTP change (POST /auth/disable-2fa) rehashes a legacy hash once', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app, { email: 'totp@example.com', password: PASSWORD })
  const legacy = await pythonHash(PASSWORD, { kind: 'django', rounds: 1000 })
  await putBack(app, user.email, legacy)
  const wrong = await post(app, '/auth/disable-2fa', { password: `${PASSWORD}x`, code: oathtool(user.secret, app.testClock.now) }, user.access_token)
  t.equal(wrong.statusCode, 400)
  t.same(wrong.json(), { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' })
  t.equal(await storedHash(app, user.email), legacy, 'a wrong password rehashes nothing')
  const off = await post(app, '/auth/disable-2fa', { password: PASSWORD, code: oathtool(user.secret, app.testClock.now) }, user.access_token)
  t.equal(off.statusCode, 204)
  t.match(await storedHash(app, user.email), ARGON2ID_TODAY)
  t.same(await rehashes(app), [[user.id, user.id, 'pbkdf2_sha256', 'success']], 'one password_rehashed, naming the old algorithm')
})

t.test('a user imported with neither hash nor password has no password: every sign-in fails, and the gauge says none', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  t.equal((await postImport(imp, { users: [{ email: 'nopass@example.com', name: 'No Password' }] })).statusCode, 200)
  t.equal(await storedHash(app, 'nopass@example.com'), '')
  for (const password of ['', ' ', 'anything-1A!']) {
    const res = await signIn(app, 'nopass@example.com', password)
    t.not(res.statusCode, 200, `"${password}" does not sign in`)
  }
  t.same((await signIn(app, 'nopass@example.com', 'anything-1A!')).json(), BAD_LOGIN)
  t.equal((await census(app)).none, 1)
})

t.test('a plain password is hashed with today\'s argon2id at import', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const res = await postImport(imp, { users: [{ email: 'plain@example.com', name: 'Plain Text', password: 'Plain-Pass-1' }] })
  t.equal(res.statusCode, 200)
  t.match(await storedHash(app, 'plain@example.com'), ARGON2ID_TODAY)
  t.equal((await signIn(app, 'plain@example.com', 'Plain-Pass-1')).statusCode, 200)
  t.same(await rehashes(app), [], 'nothing to rehash')
})

t.test('the bounds hold again at sign-in: a stored hash outside them fails like a wrong password', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const within = await pythonHash(PASSWORD, { kind: 'pbkdf2-sha256', rounds: 1000 })
  t.equal((await postImport(imp, { users: [{ email: 'bounds@example.com', name: 'Bounds Held', password_hash: within }] })).statusCode, 200)
  const user = await app.store.users.findByEmail('bounds@example.com')
  // written behind the import's back, as a copied database could hold it: 999 rounds, one below the bound
  const below = await pythonHash(PASSWORD, { kind: 'pbkdf2-sha256', rounds: 999 })
  await app.store.users.setPasswordHash(user?.id ?? '', below, new Date().toISOString())
  const res = await signIn(app, 'bounds@example.com', PASSWORD)
  t.equal(res.statusCode, 401)
  t.same(res.json(), BAD_LOGIN)
  t.equal(await storedHash(app, 'bounds@example.com'), below, 'and is not rehashed')
  // the negative control: the same password under the bound's own 1000 rounds signs in
  await app.store.users.setPasswordHash(user?.id ?? '', within, new Date().toISOString())
  t.equal((await signIn(app, 'bounds@example.com', PASSWORD)).statusCode, 200)
})

t.test('the bounds hold at sign-in for every format: argon2 t=11, scrypt r=17 and bcrypt cost 17 fail like a wrong password, unchanged', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const user = await createUser(app, { email: 'outside@example.com', password: PASSWORD })
  // written behind the import's back, as a copied database could hold them; each beside the same
  // password under its bound (the negative control), which signs in. bcrypt cost 17 is synthetic:
  // verified, it would cost 2^17 rounds (seconds) and still not match, so its answer is timed
  const cases: Array<[string, string, string]> = [
    ['argon2id t 11 > 10', await argon2Cli(PASSWORD, { type: 'id', memoryKiB: 1024, time: 11, lanes: 1 }), await argon2Cli(PASSWORD, { type: 'id', memoryKiB: 1024, time: 10, lanes: 1 })],
    ['scrypt r 17 > 16', await pythonHash(PASSWORD, { kind: 'scrypt', ln: 4, r: 17, p: 1 }), await pythonHash(PASSWORD, { kind: 'scrypt', ln: 4, r: 16, p: 1 })],
    ['bcrypt cost 17 > 16', '$2b$17$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0', await htpasswdBcrypt(PASSWORD, 4)]
  ]
  for (const [parameter, outside, within] of cases) {
    t.same(parseHash(outside), { ok: false, reason: 'out_of_range', parameter }, `out of range: ${parameter}`)
    await app.store.users.setPasswordHash(user.id, outside, new Date().toISOString())
    const started = performance.now()
    const res = await signIn(app, user.email, PASSWORD)
    const ms = performance.now() - started
    t.equal(res.statusCode, 401, parameter)
    t.same(res.json(), BAD_LOGIN)
    t.ok(ms < 6000, `answered in ${ms.toFixed(0)} ms, at the dummy hash's cost (cost 17 would take some 14 s idle)`)
    t.equal(await storedHash(app, user.email), outside, 'and is not rehashed')
    await app.store.users.setPasswordHash(user.id, within, new Date().toISOString())
    t.equal((await signIn(app, user.email, PASSWORD)).statusCode, 200, `the negative control: within the bound, ${within.slice(0, 12)}… signs in`)
  }
  t.same((await rehashes(app)).map((r) => r[2]).sort(), ['argon2id', 'bcrypt', 'scrypt'], 'only the three within their bounds were rehashed')
})

t.test('the portal-independent JSON sign-in of /api/auth/login verifies a legacy hash too', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const hash = await htpasswdBcrypt(PASSWORD, 4)
  t.equal((await postImport(imp, { users: [{ email: 'api@example.com', name: 'Api User', password_hash: hash }] })).statusCode, 200)
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'api@example.com', password: PASSWORD } })
  t.equal(res.statusCode, 200)
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(res.json().access_token) })
  t.equal(me.json().email, 'api@example.com')
  t.match(await storedHash(app, 'api@example.com'), ARGON2ID_TODAY, 'and rehashes it, as /auth/login does')
  t.same(await rehashes(app), [[me.json().id, me.json().id, 'bcrypt', 'success']])
})

/** The jq filter docs/migrating.md gives for Keycloak's export, read from the page itself. */
function keycloakFilter (): string {
  const page = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'migrating.md'), 'utf8')
  const filter = /^jq -c '([^']+)' export\/myrealm-users-\*\.json > users\.jsonl$/m.exec(page)?.[1]
  if (filter === undefined) throw new Error('docs/migrating.md has no Keycloak jq command')
  return filter
}

t.test('docs/migrating.md\'s jq filter turns a Keycloak export (PBKDF2-SHA512, standard base64 with +, / and padding, 64-byte key) into lines that import and sign in', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const secretData = await pythonHash(PASSWORD, { kind: 'keycloak-sha512', rounds: 1000 })
  const { value, salt } = JSON.parse(secretData) as { value: string, salt: string }
  t.match(value, /^[A-Za-z0-9+/]*[+][A-Za-z0-9+/]*==$/, 'standard base64, padded')
  t.match(value, /\//)
  t.equal(Buffer.from(value, 'base64').length, 64)
  const ids = ['7c1fd5a5-1e4d-4d39-8c5b-2f0f5d1a9e01', '7c1fd5a5-1e4d-4d39-8c5b-2f0f5d1a9e02']
  const password = (secret: string, algorithm: string) => ({ type: 'password', userLabel: 'My password', createdDate: 1600000000500, secretData: secret, credentialData: JSON.stringify({ hashIterations: 1000, algorithm, additionalParameters: {} }) })
  const exported = {
    realm: 'myrealm',
    users: [
      { id: ids[0], createdTimestamp: 1600000000123, username: 'kay', enabled: true, emailVerified: true, firstName: 'Kay', lastName: 'Cloak', email: 'kay@example.com', credentials: [password(secretData, 'pbkdf2-sha512')], realmRoles: ['default-roles-myrealm'] },
      // Keycloak's plain pbkdf2 is SHA-1, which gatehouse does not read: no password
      { id: ids[1], createdTimestamp: 1500000000000, username: 'old-timer', enabled: true, emailVerified: false, email: 'old@example.com', credentials: [password(secretData, 'pbkdf2')] },
      // a service account has no email: left out
      { id: '7c1fd5a5-1e4d-4d39-8c5b-2f0f5d1a9e03', createdTimestamp: 1600000000000, username: 'service-account-api', enabled: true, credentials: [] }
    ]
  }
  const file = join(tempDir(t), 'myrealm-users-0.json')
  writeFileSync(file, JSON.stringify(exported, null, 2))
  const { stdout } = await promisify(execFile)('jq', ['-c', keycloakFilter(), file])
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  const hash = `$pbkdf2-sha512$1000$${salt.replace(/=+$/, '')}$${value.replace(/=+$/, '')}`
  t.same(lines, [
    { id: ids[0], email: 'kay@example.com', name: 'Kay Cloak', email_verified: true, created_at: '2020-09-13T12:26:40Z', password_hash: hash },
    { id: ids[1], email: 'old@example.com', name: 'old-timer', email_verified: false, created_at: '2017-07-14T02:40:00Z' }
  ])
  const res = await postImport(imp, { users: lines })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { created: 2, refused: 0, results: [{ index: 0, id: ids[0] }, { index: 1, id: ids[1] }] })
  t.equal((await signIn(app, 'kay@example.com', `${PASSWORD}x`)).statusCode, 401)
  t.equal((await signIn(app, 'kay@example.com', PASSWORD)).statusCode, 200, 'the Keycloak user signs in with the original password')
  t.same(await rehashes(app), [[ids[0], ids[0], 'pbkdf2_sha512', 'success']])
  t.equal(await storedHash(app, 'old@example.com'), '', 'the SHA-1 user comes in with no password')
})

t.test('concurrent first sign-ins rehash once: the compare-and-swap lets one of them store its hash', async (t) => {
  const imp = await importer(t)
  const { app } = imp
  const hash = await htpasswdBcrypt(PASSWORD, 6)
  t.equal((await postImport(imp, { users: [{ email: 'race@example.com', name: 'Race Twice', password_hash: hash }] })).statusCode, 200)
  // each sign-in waits, once it has read the user, until all four have: all four verified the bcrypt hash
  const { users } = app.store
  const findByEmail = users.findByEmail.bind(users)
  let reads = 0
  let allRead = () => {}
  const everyoneRead = new Promise<void>((resolve) => { allRead = resolve })
  t.intercept(users, 'findByEmail', {
    value: async (email: string) => {
      const read = await findByEmail(email)
      if (++reads === 4) allRead()
      await everyoneRead
      return read
    }
  })
  const answers = await Promise.all(Array.from({ length: 4 }, async () => await signIn(app, 'race@example.com', PASSWORD)))
  t.same(answers.map((r) => r.statusCode), [200, 200, 200, 200])
  t.equal(reads, 4, 'the four sign-ins overlapped: each read the bcrypt hash before any stored its rehash')
  t.equal((await rehashes(app)).length, 1, 'one password_rehashed')
  t.match(await storedHash(app, 'race@example.com'), ARGON2ID_TODAY)
  t.equal((await signIn(app, 'race@example.com', PASSWORD)).statusCode, 200, 'and the stored hash is one that verifies')
})

t.test('the portal\'s sign-in page (routes/portal/login.ts) signs in an imported scrypt user and rehashes it', async (t) => {
  const imp = await importer(t, portalValues())
  const { app } = imp
  const hash = await pythonHash(PASSWORD, { kind: 'scrypt', ln: 10, r: 8, p: 1 })
  t.equal((await postImport(imp, { users: [{ email: 'portal@example.com', name: 'Portal User', password_hash: hash }] })).statusCode, 200)
  const browser = new PageClient(app)
  await browser.get('/portal/login')
  const wrong = await browser.post('/portal/login', { email: 'portal@example.com', password: `${PASSWORD}x`, rd: '/portal/account' })
  t.equal(wrong.statusCode, 401)
  t.equal(alertCode(wrong.body), 'invalid_credentials')
  const right = await browser.post('/portal/login', { email: 'portal@example.com', password: PASSWORD, rd: '/portal/account' })
  t.equal(right.statusCode, 303)
  t.match(await storedHash(app, 'portal@example.com'), ARGON2ID_TODAY)
  t.same((await rehashes(app)).map((r) => r[2]), ['scrypt'])
})
