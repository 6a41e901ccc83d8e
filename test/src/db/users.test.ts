import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import type { User } from '../../../src/db/users.js'
import { authHeader, build, createUser, login, type CreatedUser } from '../../helper.js'
import { NOT_FOUND } from '../../patterns.js'

/*
 * Lookups of users by id made in one turn of the event loop share one query (src/db/users.ts;
 * on SQLite a statement prepared once, or Kysely's query while a transaction is open). What must
 * hold: each caller gets its own user — or none — whatever else was in the batch, and never a
 * write that is not committed.
 */

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

/** Records the id lists of the batched reads (the real method runs). */
function batches (t: Test, app: FastifyInstance): () => string[][] {
  const users = app.store.users as unknown as { findByIds (ids: readonly string[]): Promise<Array<User | undefined>> }
  const calls = t.capture(users, 'findByIds', users.findByIds)
  return () => calls().map((call) => [...(call.args[0] as readonly string[])])
}

t.test('concurrent reads of different users, a repeated one and an unknown one each get their own answer from one query', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { email: 'admin@example.com', name: 'Admin', roles: ['admin'] })
  const people: CreatedUser[] = []
  for (let i = 0; i < 4; i++) people.push(await createUser(app, { email: `person-${i}@example.com`, name: `Person ${i}` }))
  const adminToken = (await login(app, admin)).access_token
  const tokens: string[] = []
  for (const person of people) tokens.push((await login(app, person)).access_token)
  const seen = batches(t, app)

  const [mine, ...theirs] = await Promise.all([
    app.inject({ method: 'GET', url: `/api/users/${UNKNOWN_ID}`, headers: authHeader(adminToken) }),
    ...people.map((person, i) => app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(tokens[i] ?? '') })),
    ...people.map((person) => app.inject({ method: 'GET', url: `/api/users/${person.id}`, headers: authHeader(adminToken) }))
  ])
  t.equal(mine?.statusCode, 404)
  t.strictSame(mine?.json(), NOT_FOUND)
  const expected = [...people, ...people]
  theirs.forEach((res, i) => {
    const person = expected[i]
    t.equal(res.statusCode, 200)
    t.match(res.json(), { id: person?.id, email: person?.email, name: `Person ${i % people.length}` })
  })

  const reads = seen()
  t.equal(reads.flat().length, 1 + people.length * 2, 'every lookup went through the batch')
  t.equal(reads.length, 1, `one query for all ${1 + people.length * 2} lookups`)
  t.strictSame(new Set(reads.flat()), new Set([UNKNOWN_ID, ...people.map((p) => p.id)]))
})

t.test('a read right after a write sees it: the batch reads the rows as committed when it runs', async (t) => {
  const app = await build(t)
  const person = await createUser(app, { email: 'changing@example.com', name: 'Before' })
  const token = (await login(app, person)).access_token
  const adminToken = (await login(app, await createUser(app, { roles: ['admin'] }))).access_token
  for (const name of ['First', 'Second', 'Third']) {
    const put = await app.inject({ method: 'PUT', url: `/api/users/${person.id}`, headers: authHeader(token), payload: { name } })
    t.equal(put.statusCode, 200)
    const [me, byId] = await Promise.all([
      app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(token) }),
      app.inject({ method: 'GET', url: `/api/users/${person.id}`, headers: authHeader(token) })
    ])
    t.equal(me.json().name, name)
    t.equal(byId.json().name, name)
  }
  const gone = await app.inject({ method: 'DELETE', url: `/api/users/${person.id}`, headers: authHeader(adminToken) })
  t.equal(gone.statusCode, 204)
  const after = await app.inject({ method: 'GET', url: `/api/users/${person.id}`, headers: authHeader(adminToken) })
  t.equal(after.statusCode, 404)
  t.strictSame(after.json(), NOT_FOUND)
})

t.test('a read made while another caller\'s transaction has written the user sees the committed row, not the write', async (t) => {
  const app = await build(t)
  const person = await createUser(app, { email: 'pending@example.com', name: 'Committed' })
  let outside: Promise<User | undefined> | undefined
  const rolledBack = app.store.transaction(async (tx) => {
    await tx.users.update(person.id, { name: 'Uncommitted' }, new Date().toISOString())
    // negative control: on the transaction's own connection the write is visible, so a read
    // that shared it without waiting (SQLite has one connection) would return it
    t.equal((await tx.users.findById(person.id))?.name, 'Uncommitted')
    outside = app.store.users.findById(person.id)
    await new Promise((resolve) => setTimeout(resolve, 20))
    throw new Error('roll back')
  })
  await t.rejects(rolledBack, { message: 'roll back' })
  t.equal((await outside)?.name, 'Committed')
  t.equal((await app.store.users.findById(person.id))?.name, 'Committed')
})
