import { sql } from 'kysely'
import { test } from 'tap'
import { authHeader, createUser, login, rawSql, tempDir, TEST_SECRET } from '../../../helper.js'
import { KeyedHash } from '../../../../src/crypto/keyed-hash.js'
import { SUPERUSER_REQUIRED } from '../../../patterns.js'
import { challengeOf, enrolledUser, INVALID_OTP, oathtool, post, testClock, totpApp } from './support.js'

test('recovery codes work once each; regeneration voids the old set', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const [first = '', second = ''] = user.recoveryCodes

  const token = await challengeOf(app, user)
  const used = await post(app, '/auth/verify-2fa', { mfa_token: token, recovery_code: first.toUpperCase() })
  t.equal(used.statusCode, 200, 'a recovery code finishes a sign-in (case and dash as typed do not matter)')
  const again = await post(app, '/auth/verify-2fa', { mfa_token: await challengeOf(app, user), recovery_code: first })
  t.equal(again.statusCode, 400, 'the same code twice: refused')
  t.strictSame(again.json(), INVALID_OTP)

  const res = await post(app, '/auth/recovery-codes', { password: user.password, code: oathtool(user.secret, app.testClock.now) }, user.access_token)
  t.equal(res.statusCode, 200)
  const fresh = (res.json() as { recovery_codes: string[] }).recovery_codes
  t.equal(fresh.length, 10)
  t.notOk(fresh.includes(second))
  const old = await post(app, '/auth/verify-2fa', { mfa_token: await challengeOf(app, user), recovery_code: second })
  t.equal(old.statusCode, 400, 'an unused code of the old set: void')
  const ok = await post(app, '/auth/verify-2fa', { mfa_token: await challengeOf(app, user), recovery_code: fresh[0] })
  t.equal(ok.statusCode, 200, 'negative control: a code of the new set works')

  const wrongCode = await post(app, '/auth/recovery-codes', { password: user.password, code: '000000' }, user.access_token)
  t.equal(wrongCode.statusCode, 400)
  t.strictSame(wrongCode.json(), INVALID_OTP)
})

test('the database holds no secret and no code in the clear', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const token = await challengeOf(app, user)
  const dump = JSON.stringify([
    await rawSql(app.config, sql`select * from totp_factors`),
    await rawSql(app.config, sql`select * from recovery_codes`),
    await rawSql(app.config, sql`select * from mfa_challenges`)
  ])
  t.notOk(dump.includes(user.secret), 'no secret')
  t.notOk(dump.toLowerCase().includes(user.secret.toLowerCase()), 'no secret in any case')
  for (const code of user.recoveryCodes) {
    t.notOk(dump.includes(code), 'no recovery code')
    t.notOk(dump.includes(code.replace('-', '')), 'no recovery code without its dash')
  }
  t.notOk(dump.includes(token), 'no challenge token')
  const [factor] = await rawSql<{ secret: string, state: string }>(app.config, sql`select secret, state from totp_factors`)
  t.equal(factor?.state, 'active')
  t.match(factor?.secret, /^t1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'sealed under key t1')
  // negative control: the dump does hold what is meant to be there
  t.ok(dump.includes(user.id))
})

test('enabling 2FA revokes the other sessions: their tokens are refused within a second on a second instance', async (t) => {
  const dir = tempDir(t)
  const values = { DATA_DIR: dir, REVOCATION_POLL_MS: 100 }
  const app = await totpApp(t, values)
  const other = await totpApp(t, values, app.testClock)
  const user = await createUser(app)
  const kept = await login(app, user)
  const elsewhere = await login(app, user)
  const me = async (token: string) => (await other.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) })).statusCode
  t.equal(await me(elsewhere.access_token), 200, 'before: the other session works on the second instance')

  const enrolled = await post(app, '/auth/enable-2fa', { password: user.password }, kept.access_token)
  const { secret } = enrolled.json() as { secret: string }
  const verified = await post(app, '/auth/verify-2fa', { code: oathtool(secret, app.testClock.now) }, kept.access_token)
  t.equal(verified.statusCode, 200)
  const started = Date.now()
  let status = 200
  while (status === 200 && Date.now() - started < 1000) {
    status = await me(elsewhere.access_token)
    if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(status, 401, 'the other session\'s access token: 401 on the second instance within a second')
  const refreshed = await post(other, '/auth/refresh', { refresh_token: elsewhere.refresh_token })
  t.equal(refreshed.statusCode, 401, 'its refresh token too')
  const { access_token: elevated } = verified.json() as { access_token: string }
  t.equal(await me(elevated), 200, 'negative control: the enrolling session continues with its new tokens')
})

test('disable-2fa with the password and a code; a superuser removes a factor; each queues nothing without mail and is audited', async (t) => {
  const app = await totpApp(t)
  const user = await enrolledUser(app)
  const noCode = await post(app, '/auth/disable-2fa', { password: user.password }, user.access_token)
  t.equal(noCode.statusCode, 422)
  const badPassword = await post(app, '/auth/disable-2fa', { password: 'nope-nope', code: oathtool(user.secret, app.testClock.now) }, user.access_token)
  t.equal(badPassword.statusCode, 400)
  t.equal(badPassword.json().code, 'invalid_password')
  const off = await post(app, '/auth/disable-2fa', { password: user.password, recovery_code: user.recoveryCodes[3] }, user.access_token)
  t.equal(off.statusCode, 204)
  t.equal(off.body, '')
  t.equal((await login(app, user)).response.statusCode, 200, 'a password alone signs in again')

  const admin = await createUser(app, { isSuperuser: true })
  const { access_token: adminToken } = await login(app, admin)
  const second = await enrolledUser(app)
  const plain = await createUser(app)
  const { access_token: plainToken } = await login(app, plain)
  const del = (id: string, token: string) => app.inject({ method: 'DELETE', url: `/api/users/${id}/2fa`, headers: authHeader(token) })
  const refused = await del(second.id, plainToken)
  t.equal(refused.statusCode, 403, 'not a superuser')
  t.strictSame(refused.json(), SUPERUSER_REQUIRED)
  t.equal((await del('00000000-0000-4000-8000-000000000000', adminToken)).statusCode, 404)
  const removed = await del(second.id, adminToken)
  t.equal(removed.statusCode, 204)
  t.equal((await login(app, second)).response.statusCode, 200, 'its owner signs in with the password alone')

  const audit = await app.inject({ method: 'GET', url: '/api/audit?per_page=100', headers: authHeader(adminToken) })
  const events = (audit.json() as { data: { event: string }[] }).data.map((e) => e.event)
  t.ok(events.includes('totp_enabled'))
  t.ok(events.includes('totp_disabled'))
  t.strictSame(await app.store.mailOutbox.list(), [], 'no mail configured: no notice queued')
})

test('while off: enable-2fa and verify-2fa 501, the others 404, sign-in untouched', async (t) => {
  const clock = testClock()
  const app = await totpApp(t, { ENABLE_TOTP: false }, clock)
  const user = await createUser(app)
  const { access_token: access } = await login(app, user)
  t.equal((await post(app, '/auth/enable-2fa', { password: user.password }, access)).statusCode, 501)
  t.equal((await post(app, '/auth/verify-2fa', { code: '123456' }, access)).statusCode, 501)
  t.equal((await post(app, '/auth/recovery-codes', { password: user.password, code: '123456' }, access)).statusCode, 404)
  t.equal((await post(app, '/auth/disable-2fa', { password: user.password, code: '123456' }, access)).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}/2fa`, headers: authHeader(access) })).statusCode, 404)
})

test('wrong codes on disable-2fa count toward the login throttle too', async (t) => {
  const app = await totpApp(t, { LOGIN_MAX_FAILURES: 2 })
  const user = await enrolledUser(app)
  const wrong = oathtool(user.secret, app.testClock.now + 600_000)
  for (let i = 0; i < 2; i++) {
    const res = await post(app, '/auth/disable-2fa', { password: user.password, code: wrong }, user.access_token)
    t.equal(res.statusCode, 400)
    t.strictSame(res.json(), INVALID_OTP)
  }
  const limited = await post(app, '/auth/disable-2fa', { password: user.password, code: oathtool(user.secret, app.testClock.now) }, user.access_token)
  t.equal(limited.statusCode, 429, 'even the right code, once the limit is reached')
})

test('recovery codes survive a JWT_SECRET rotation (keyed from DATA_ENCRYPTION_KEYS, key id stored beside); a set hashed under the JWT_SECRET key before keeps verifying', async (t) => {
  const dir = tempDir(t)
  const app = await totpApp(t, { DATA_DIR: dir })
  const user = await enrolledUser(app)
  const input = (code: string) => `recovery\0${user.id}\0${code.replace('-', '')}`
  const rows = await rawSql<{ code_hash: string }>(app.config, sql`select code_hash from recovery_codes where user_id = ${user.id}`)
  const current = new KeyedHash(Buffer.alloc(32, 9), 'gatehouse recovery codes')
  t.ok(rows.some((r) => r.code_hash === `k:t1:${current.of(input(user.recoveryCodes[0] ?? ''))}`), 'stored as k:<key id>:<HMAC>')

  const rotated = await totpApp(t, { DATA_DIR: dir, JWT_SECRET: 'another-test-secret-that-is-32-bytes-or-more' }, app.testClock)
  const after = await post(rotated, '/auth/verify-2fa', { mfa_token: await challengeOf(rotated, user), recovery_code: user.recoveryCodes[0] })
  t.equal(after.statusCode, 200, 'a recovery code works after JWT_SECRET changed')

  // a code stored before this change: the bare HMAC under the JWT_SECRET key still verifies
  const second = user.recoveryCodes[1] ?? ''
  const legacy = new KeyedHash(TEST_SECRET, 'gatehouse second factor').of(input(second))
  await rawSql(app.config, sql`update recovery_codes set code_hash = ${legacy} where code_hash = ${`k:t1:${current.of(input(second))}`}`)
  const old = await post(app, '/auth/verify-2fa', { mfa_token: await challengeOf(app, user), recovery_code: second })
  t.equal(old.statusCode, 200, 'a code hashed the old way still works under the old JWT_SECRET')
})
