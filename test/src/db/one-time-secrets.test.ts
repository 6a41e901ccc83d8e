import t from 'tap'
import { sql } from 'kysely'
import { build, createUser, rawSql } from '../../helper.js'

const iso = (ms: number) => new Date(ms).toISOString()

t.test('two replacing issues of a code at once leave one live code (PostgreSQL READ COMMITTED included)', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const now = Date.now()
  const issue = async (secretHash: string) => {
    await app.store.transaction(async (tx) => {
      await tx.oneTimeSecrets.issue({ userId: user.id, purpose: 'login', secretHash, credentialsVersion: 0, createdAt: iso(now), expiresAt: iso(now + 600_000) }, true)
    })
  }
  for (let round = 0; round < 5; round++) await Promise.all([issue(`a${round}`), issue(`b${round}`), issue(`c${round}`)])
  const [row] = await rawSql<{ n: number | string }>(app.config, sql`select count(*) as n from one_time_secrets where user_id = ${user.id} and spent_at is null`)
  t.equal(Number(row?.n), 1, 'one live code')
})
