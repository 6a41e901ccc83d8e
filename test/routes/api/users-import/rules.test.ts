import t from 'tap'
import { authHeader, createUser, login } from '../../../helper.js'
import { SUPERUSER_REQUIRED } from '../../../patterns.js'
import { importer, postImport, VALIDATION_FAILED } from './support.js'

/*
 * routes/api/users-import.ts and src/imports/: every line checked before anything is written,
 * all or nothing (or `partial`), dry runs that answer exactly as the import would, refusals under
 * dotted paths with §5's messages, and the table's formats and bounds.
 */

const BCRYPT_TAIL = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'.slice(0, 53)
const B64_16 = 'c2FsdHNhbHRzYWx0c2FsdA'
const B64_32 = 'uIrK6HMCGhQ0iNjYHZuzkm4WcvMcJmzwZw+m0wUykoY'
const ID = '0b6f3a52-5a8e-4e49-9d0c-0f3d6c0e2a11'
const user = (n: number, extra: Record<string, unknown> = {}) => ({ email: `user${n}@example.com`, name: `User ${n}`, ...extra })
const count = async (imp: { app: { store: { users: { count (): Promise<number> } } } }) => await imp.app.store.users.count()

t.test('only a superuser imports: an admin gets 403 superuser_required, no token 401', async (t) => {
  const imp = await importer(t)
  const admin = await createUser(imp.app, { email: 'admin@example.com', roles: ['admin'] })
  const { access_token: adminToken } = await login(imp.app, admin)
  const denied = await postImport({ ...imp, token: adminToken }, { users: [user(1)] })
  t.equal(denied.statusCode, 403)
  t.same(denied.json(), SUPERUSER_REQUIRED)
  const anonymous = await imp.app.inject({ method: 'POST', url: '/api/users/import', payload: { users: [user(1)] } })
  t.equal(anonymous.statusCode, 401)
  t.equal(await count(imp), 2, 'nothing written')
})

t.test('the kept fields are kept: id, created_at, email_verified, roles, is_superuser, age; the rest defaults', async (t) => {
  const imp = await importer(t, { DEFAULT_ROLES: 'member' })
  const res = await postImport(imp, {
    users: [
      user(1, { id: ID.toUpperCase(), email: ' Mixed.Case@Example.COM ', created_at: '2019-03-04T05:06:07+02:00', email_verified: true, roles: ['editor'], is_superuser: true, age: 44 }),
      user(2)
    ]
  })
  t.equal(res.statusCode, 200)
  const second = await imp.app.store.users.findByEmail('user2@example.com')
  t.same(res.json(), { created: 2, refused: 0, results: [{ index: 0, id: ID }, { index: 1, id: second?.id }] })
  const shown = await imp.app.inject({ method: 'GET', url: `/api/users/${ID}`, headers: authHeader(imp.token) })
  const { updated_at: _updated, ...kept } = shown.json()
  t.same(kept, { id: ID, email: 'mixed.case@example.com', name: 'User 1', age: 44, created_at: '2019-03-04T03:06:07.000Z', roles: ['editor'], is_superuser: true, email_verified: true })
  t.same([second?.roles, second?.isSuperuser, second?.emailVerified, second?.age, second?.passwordHash], [['member'], false, false, null, ''])
  const { entries } = await imp.app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.same(entries.map((e) => [e.actorId, e.detail]), [[imp.rootId, 'created 2']], 'one users_imported event')
})

const REFUSED_BODY = {
  users: [
    user(0),
    user(1, { email: 'not-an-email', nickname: 'x', age: 12 }),
    user(2, { password_hash: '$1$abc$def', name: ' ' }),
    user(3, { email: 'USER0@example.com' }),
    user(4, { password_hash: `$2b$17$${BCRYPT_TAIL}`, password: 'Long-Enough-1' }),
    user(5, { id: ID }),
    user(6, { id: ID, created_at: 'yesterday' })
  ]
}
const REFUSED_ERRORS = {
  'users.1.email': ['The users.1.email field must be a valid email address'],
  'users.1.age': ['The users.1.age field must be at least 18'],
  'users.1.nickname': ['The users.1.nickname field is invalid'],
  'users.2.name': ['The users.2.name field is required'],
  'users.2.password_hash': ['The users.2.password_hash field is not a supported hash format'],
  'users.3.email': ['The users.3.email field is already taken'],
  'users.4.password_hash': ['The users.4.password_hash field has parameters out of range (bcrypt cost 17 > 16)', 'The users.4.password_hash field is invalid'],
  'users.6.id': ['The users.6.id field is already taken'],
  'users.6.created_at': ['The users.6.created_at field is invalid']
}

t.test('all or nothing: any refused line answers 422 with every refused line under dotted paths, and writes nothing', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, REFUSED_BODY)
  t.equal(res.statusCode, 422)
  t.same(res.json(), { ...VALIDATION_FAILED, errors: REFUSED_ERRORS })
  t.same(Object.keys(res.json().errors), Object.keys(REFUSED_ERRORS), 'by line, then in ImportUser\'s order')
  t.equal(await count(imp), 1, 'not even the valid lines')
  const { entries } = await imp.app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.equal(entries.length, 0)
})

t.test('a dry run answers exactly as the import would, 422 or 200, and writes nothing', async (t) => {
  const imp = await importer(t)
  const refused = await postImport(imp, { ...REFUSED_BODY, dry_run: true })
  t.equal(refused.statusCode, 422)
  t.same(refused.json(), { ...VALIDATION_FAILED, errors: REFUSED_ERRORS })
  const good = { users: [user(1, { id: ID }), user(2, { id: '1b6f3a52-5a8e-4e49-9d0c-0f3d6c0e2a11', password: 'Plain-Pass-1' })] }
  const dry = await postImport(imp, { ...good, dry_run: true })
  t.equal(dry.statusCode, 200)
  t.equal(await count(imp), 1, 'nothing written by either dry run')
  const partialDry = await postImport(imp, { ...REFUSED_BODY, dry_run: true, partial: true })
  t.equal(await count(imp), 1)
  t.same((await imp.app.auditTrail.page({ event: 'users_imported' }, 1, 10)).entries, [], 'no dry run writes a users_imported event')
  const real = await postImport(imp, good)
  t.same(dry.json(), real.json(), 'the same answer as the import itself')
  t.equal(await count(imp), 3)
  // the partial dry run, against the partial import on a fresh app
  const fresh = await importer(t)
  const partialReal = await postImport(fresh, { ...REFUSED_BODY, partial: true })
  const withoutIds = (body: { results: Array<Record<string, unknown>> }) => body.results.map(({ id, ...r }) => ({ ...r, id: typeof id }))
  t.same(withoutIds(partialDry.json()), withoutIds(partialReal.json()), 'partial: the same lines created and refused, with the same errors')
})

t.test('partial writes the valid lines in one transaction and reports the refused ones: 200 {created, refused, results}', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { ...REFUSED_BODY, partial: true })
  t.equal(res.statusCode, 200)
  const id0 = (await imp.app.store.users.findByEmail('user0@example.com'))?.id
  const errorsOf = (i: number) => Object.fromEntries(Object.entries(REFUSED_ERRORS).filter(([k]) => k.startsWith(`users.${i}.`)))
  t.same(res.json(), {
    created: 2,
    refused: 5,
    results: [{ index: 0, id: id0 }, ...[1, 2, 3, 4].map((index) => ({ index, errors: errorsOf(index) })), { index: 5, id: ID }, { index: 6, errors: errorsOf(6) }]
  })
  t.equal(await count(imp), 3)
  const { entries } = await imp.app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.same(entries.map((e) => e.detail), ['created 2 (partial)'])
})

t.test('a line taken by a user already there is refused: email and id', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { users: [user(1, { email: 'ROOT@example.com' })] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), { ...VALIDATION_FAILED, errors: { 'users.0.email': ['The users.0.email field is already taken'] } })
  t.equal((await postImport(imp, { users: [user(1, { id: imp.rootId })] })).json().errors['users.0.id'][0], 'The users.0.id field is already taken')
})

const BOUNDS: Array<[string, string]> = [
  [`$2y$03$${BCRYPT_TAIL}`, 'bcrypt cost 3 < 4'],
  [`$2a$17$${BCRYPT_TAIL}`, 'bcrypt cost 17 > 16'],
  [`$argon2id$v=19$m=262145,t=2,p=1$${B64_16}$${B64_32}`, 'argon2id m 262145 > 262144'],
  [`$argon2i$v=19$m=65536,t=11,p=1$${B64_16}$${B64_32}`, 'argon2i t 11 > 10'],
  [`$argon2d$v=16$m=65536,t=2,p=17$${B64_16}$${B64_32}`, 'argon2d p 17 > 16'],
  [`$scrypt$ln=21,r=1,p=1$${B64_16}$${B64_32}`, 'scrypt ln 21 > 20'],
  [`$scrypt$ln=10,r=17,p=1$${B64_16}$${B64_32}`, 'scrypt r 17 > 16'],
  [`$scrypt$ln=10,r=8,p=17$${B64_16}$${B64_32}`, 'scrypt p 17 > 16'],
  [`$scrypt$ln=20,r=3,p=1$${B64_16}$${B64_32}`, 'scrypt memory 402653184 > 268435456'],
  [`$pbkdf2-sha256$999$${B64_16}$${B64_32}`, 'pbkdf2_sha256 iterations 999 < 1000'],
  [`$pbkdf2-sha512$10000001$${B64_16}$${B64_32}`, 'pbkdf2_sha512 iterations 10000001 > 10000000'],
  [`pbkdf2_sha256$10000001$somesalt$${B64_32}=`, 'pbkdf2_sha256 iterations 10000001 > 10000000'],
  // the lower bounds: argon2's 8 KiB a lane and one pass, PBKDF2's 1000 iterations in Django's form too
  [`$argon2id$v=19$m=127,t=2,p=16$${B64_16}$${B64_32}`, 'argon2id m 127 < 128'],
  [`$argon2i$v=19$m=65536,t=0,p=1$${B64_16}$${B64_32}`, 'argon2i t 0 < 1'],
  [`pbkdf2_sha256$999$somesalt$${B64_32}=`, 'pbkdf2_sha256 iterations 999 < 1000']
]

/** Every parameter exactly at its upper bound, and a few at their lower one (argon2's m exactly 8·p): accepted. */
const AT_BOUNDS = [
  `$2b$16$${BCRYPT_TAIL}`,
  `$2y$04$${BCRYPT_TAIL}`,
  `$argon2id$v=19$m=262144,t=10,p=16$${B64_16}$${B64_32}`,
  `$argon2d$v=16$m=128,t=1,p=16$${B64_16}$${B64_32}`,
  // 128 · 2^20 · 2 and 128 · 2^17 · 16 bytes: exactly 268435456
  `$scrypt$ln=20,r=2,p=16$${B64_16}$${B64_32}`,
  `$scrypt$ln=17,r=16,p=1$${B64_16}$${B64_32}`,
  `$pbkdf2-sha256$10000000$${B64_16}$${B64_32}`,
  `$pbkdf2-sha512$10000000$${B64_16}$${B64_32}`,
  `pbkdf2_sha256$10000000$somesalt$${B64_32}=`,
  `pbkdf2_sha256$1000$somesalt$${B64_32}=`
]

const UNSUPPORTED = [
  '', 'plain text', '$1$saltsalt$hash1234567890123456', // md5-crypt
  '$6$rounds=5000$saltsalt$' + 'a'.repeat(86), // sha512-crypt
  `$2x$10$${BCRYPT_TAIL}`, `$2b$10$${BCRYPT_TAIL.slice(1)}`,
  `$argon2id$v=18$m=65536,t=2,p=1$${B64_16}$${B64_32}`, `$argon2id$m=65536,t=2,p=1$${B64_16}$${B64_32}`,
  `$argon2id$v=19$m=65536,t=2,p=1,keyid=x$${B64_16}$${B64_32}`, `$argon2id$v=19$m=65536,t=2,p=1$${B64_16}$short`,
  `$scrypt$ln=16,r=8,p=1$${B64_16}`, `$pbkdf2-sha1$29000$${B64_16}$${B64_32}`, `pbkdf2_sha1$260000$salt$${B64_32}=`,
  'bcrypt_sha256$$2b$12$' + BCRYPT_TAIL, '{SSHA}abcdefgh'
]

t.test('the table\'s bounds: a parameter beyond one is refused, naming it', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { users: BOUNDS.map(([hash], i) => user(i, { password_hash: hash })) })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, Object.fromEntries(BOUNDS.map(([, parameter], i) => [`users.${i}.password_hash`, [`The users.${i}.password_hash field has parameters out of range (${parameter})`]])))
})

t.test('a parameter exactly at its bound is accepted: bcrypt 16, argon2 m=262144 t=10 p=16, scrypt at 256 MiB, 10,000,000 iterations', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { users: AT_BOUNDS.map((hash, i) => user(i, { password_hash: hash })), dry_run: true })
  t.equal(res.statusCode, 200, 'every line at a bound passes')
  t.same({ ...res.json(), results: res.json().results.map((r: { index: number, id: unknown }) => [r.index, typeof r.id]) },
    { created: AT_BOUNDS.length, refused: 0, results: AT_BOUNDS.map((_hash, i) => [i, 'string']) })
  t.equal(await count(imp), 1, 'a dry run: nothing written')
})

t.test('an unrecognised hash is refused as not a supported format (md5-crypt and sha512-crypt are out of scope)', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { users: UNSUPPORTED.map((hash, i) => user(i, { password_hash: hash })) })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, Object.fromEntries(UNSUPPORTED.map((_hash, i) => [`users.${i}.password_hash`, [`The users.${i}.password_hash field is not a supported hash format`]])))
})

t.test('the envelope: 1 to 1000 users, booleans, nothing else; a hash over 1024 characters', async (t) => {
  const imp = await importer(t)
  const cases: Array<[unknown, Record<string, string[]>]> = [
    [{ users: [] }, { users: ['The users field must contain at least 1 items'] }],
    [{}, { users: ['The users field is required'] }],
    [{ users: [user(1)], dry_run: 'yes', extra: 1 }, { dry_run: ['The dry_run field is invalid'], extra: ['The extra field is invalid'] }],
    [{ users: [user(1, { password_hash: `$2b$10$${'a'.repeat(1100)}` })] }, { 'users.0.password_hash': ['The users.0.password_hash field must not exceed 1024 characters'] }],
    [{ users: ['a line'] }, { 'users.0': ['The users.0 field is invalid'] }]
  ]
  for (const [payload, errors] of cases) {
    const res = await postImport(imp, payload)
    t.equal(res.statusCode, 422, JSON.stringify(payload).slice(0, 60))
    t.same(res.json(), { ...VALIDATION_FAILED, errors })
  }
})

t.test('1000 lines import in one call past BODY_LIMIT (the route takes 4 MiB); 1001 are refused, and over 4 MiB is 413', async (t) => {
  const imp = await importer(t)
  const hash = `$2b$10$${BCRYPT_TAIL}`
  const many = Array.from({ length: 1000 }, (_, i) => user(i, { password_hash: hash }))
  t.ok(JSON.stringify({ users: many }).length > 65536, 'larger than the default BODY_LIMIT')
  const ok = await postImport(imp, { users: many })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().created, 1000)
  const tooMany = await postImport(imp, { users: [...many, user(1000)] })
  t.equal(tooMany.statusCode, 422)
  t.same(tooMany.json().errors, { users: ['The users field must not contain more than 1000 items'] })
  const padded = `{"users":${' '.repeat(4 * 1024 * 1024)}[]}`
  const res = await imp.app.inject({ method: 'POST', url: '/api/users/import', headers: { ...authHeader(imp.token), 'content-type': 'application/json' }, payload: padded })
  t.equal(res.statusCode, 413)
  t.equal(res.json().code, 'payload_too_large')
  const elsewhere = await imp.app.inject({ method: 'POST', url: '/api/users', headers: { ...authHeader(imp.token), 'content-type': 'application/json' }, payload: JSON.stringify({ ...user(1), password: 'Long-Enough-1', pad: ' '.repeat(70000) }) })
  t.equal(elsewhere.statusCode, 413, 'the other routes keep BODY_LIMIT')
})

t.test('a row another writer takes between the check and the insert refuses its line: the import rolls back, or with partial that line alone', async (t) => {
  const imp = await importer(t)
  const { users } = imp.app.store
  // the check sees nothing taken, as if root@example.com were written just after it
  t.intercept(users, 'taken', { value: async () => ({ emails: new Set<string>(), ids: new Set<string>() }) })
  const body = { users: [user(1), user(2, { email: 'root@example.com' }), user(3)] }
  const whole = await postImport(imp, body)
  t.equal(whole.statusCode, 422)
  t.same(whole.json(), { ...VALIDATION_FAILED, errors: { 'users.1.email': ['The users.1.email field is already taken'] } })
  t.equal(await count(imp), 1, 'rolled back: lines 0 and 2 are not written either')
  const partial = await postImport(imp, { ...body, partial: true })
  t.equal(partial.statusCode, 200)
  t.match(partial.json(), { created: 2, refused: 1, results: [{ index: 0 }, { index: 1, errors: { 'users.1.email': ['The users.1.email field is already taken'] } }, { index: 2 }] })
  t.equal(await count(imp), 3)
})

t.test('a plain password keeps CreateUserRequest\'s rules; the other fields theirs', async (t) => {
  const imp = await importer(t)
  const res = await postImport(imp, { users: [user(1, { password: 'short', roles: ['Bad Role'], is_superuser: 'yes', email_verified: 1, id: 'not-a-uuid' })] })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, {
    'users.0.id': ['The users.0.id field is invalid'],
    'users.0.roles.0': ['The users.0.roles.0 field is invalid'],
    'users.0.is_superuser': ['The users.0.is_superuser field is invalid'],
    'users.0.email_verified': ['The users.0.email_verified field is invalid'],
    'users.0.password': ['The users.0.password field must be at least 8 characters']
  })
})

t.test('with VALIDATION_ERROR_DETAILS the 422 lists each failure with its tag; no password or hash is echoed', async (t) => {
  const imp = await importer(t, { VALIDATION_ERROR_DETAILS: true })
  const hash = `$2b$17$${BCRYPT_TAIL}`
  const res = await postImport(imp, { users: [user(1, { email: 'nope', password_hash: hash }), user(2, { password: 'short' })] })
  t.equal(res.statusCode, 422)
  t.same(res.json().details, [
    { field: 'users.0.email', tag: 'email', value: 'nope', message: 'The users.0.email field must be a valid email address' },
    { field: 'users.0.password_hash', tag: 'hash_parameters', value: '', message: 'The users.0.password_hash field has parameters out of range (bcrypt cost 17 > 16)' },
    { field: 'users.1.password', tag: 'min', value: '', message: 'The users.1.password field must be at least 8 characters' }
  ])
  t.notOk(res.body.includes(BCRYPT_TAIL) || res.body.includes('short"'), 'neither the hash nor the password is in the answer')
})
