import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { authHeader, build, createUser, login } from '../helper.js'

/*
 * PostgreSQL runs transactions side by side (SQLite has one writer at a time), so a read that
 * a decision rests on must lock its row. Runs in the PostgreSQL pass only (test/passes.sh).
 */

t.test('an update waits for a transaction holding the user, then judges the grant it removes from the committed row', async (t) => {
  const app = await build(t)
  t.equal(app.store.kind, 'postgres')
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: adminToken } = await login(app, admin)
  const user = await createUser(app, { roles: ['user'] })
  const { access_token: userToken } = await login(app, user)

  let put: Promise<{ statusCode: number }> | undefined
  let answered = false
  await app.store.transaction(async (tx) => {
    t.ok(await tx.users.findById(user.id))
    // another request sets the roles back while this transaction grants admin
    put = app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(adminToken), payload: { roles: ['user'] } })
      .then((res) => { answered = true; return res })
    await sleep(300)
    t.equal(answered, false, 'the update waits for the row lock')
    await tx.users.update(user.id, { roles: ['user', 'admin'] }, new Date().toISOString())
  })
  t.equal((await put)?.statusCode, 200)

  // the update removed the admin grant the transaction had committed, so the user's sessions end
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(userToken) })
  t.equal(me.statusCode, 401)
  t.equal(me.json().code, 'token_revoked')
  t.strictSame((await app.store.users.findById(user.id))?.roles, ['user'])
})
