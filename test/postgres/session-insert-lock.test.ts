import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import t from 'tap'
import { build, createUser, login, rawSql } from '../helper.js'

/*
 * PostgreSQL runs transactions side by side: a sign-in's session insert can meet a password
 * change that has written the user row but not committed yet. Runs in the PostgreSQL pass only.
 */

const invalidCredentials = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }

t.test('a sign-in whose session insert meets an uncommitted password change waits for it, then is refused', async (t) => {
  const app = await build(t)
  t.equal(app.store.kind, 'postgres')
  const user = await createUser(app)
  await login(app, user)
  const newHash = await app.services.hasher.hash('New-Password-2')

  const sessions = app.store.sessions
  const insert = sessions.create.bind(sessions)
  let waited = false
  t.capture(sessions, 'create', async (...args: Parameters<typeof insert>) => {
    let stored: Promise<boolean> | undefined
    await app.store.transaction(async (tx) => {
      // the change-password's write, its transaction still open when the sign-in inserts
      await tx.users.setPasswordHash(user.id, newHash, new Date().toISOString())
      const state = { settled: false }
      stored = insert(...args).finally(() => { state.settled = true })
      // until the insert either finished (it did not wait) or is seen waiting for the row lock
      while (!state.settled && !waited) {
        const rows = await rawSql<{ waiting: number }>(app.config, sql`
          select count(*)::int as waiting from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like 'insert into "sessions"%'`)
        waited = (rows[0]?.waiting ?? 0) > 0
        if (!waited) await sleep(10)
      }
    })
    return await (stored as Promise<boolean>)
  })

  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(waited, true, 'the insert waited for the change to commit')
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), invalidCredentials)
})
