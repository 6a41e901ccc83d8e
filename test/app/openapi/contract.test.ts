import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifySchema } from 'fastify'
import t from 'tap'
import { build, createUser, login } from '../../helper.js'
import { assertContract, contractViolations } from '../../contract.js'

/*
 * The negative control of test/contract.ts: build() holds every answer to the app's document.
 * Routes added here (documented, as every route is) answer what their schema does not say,
 * and each mismatch is recorded, then thrown at teardown.
 */
const Count = Type.Object({ n: Type.Integer({ minimum: 5 }) })

async function mismatching (app: FastifyInstance): Promise<void> {
  const schema: FastifySchema = { tags: ['docs'], summary: 'A test route', response: { 200: Count } }
  // the serializer keeps `n: 1` (it never checks `minimum`), so the body breaks the document
  app.get('/test/contract/body', { schema }, async () => ({ n: 1 }))
  app.get('/test/contract/status', { schema }, async (_request, reply) => reply.code(202).send({ n: 7 }))
  app.get('/test/contract/header', { schema }, async (_request, reply) => reply.header('location', '/elsewhere').send({ n: 7 }))
}

t.test('an answer that breaks the document is recorded and fails the test at teardown', async (t) => {
  const app = await build(t, {}, { setup: mismatching })
  for (const path of ['body', 'status', 'header']) await app.inject({ method: 'GET', url: `/test/contract/${path}` })
  const violations = contractViolations(app)
  t.same(violations, [
    'GET /test/contract/body 200: body/n must be >= 5 (#/properties/n/minimum): {"n":1}',
    'GET /test/contract/status 202: answered 202, which the document does not list',
    'GET /test/contract/header 200: sent the undocumented header location'
  ])
  t.throws(() => { assertContract(app) }, { message: /^3 response\(s\) do not match GET \/openapi\.json:\nGET \/test\/contract\/body 200/ })
  // emptied, so this test's own teardown passes: the mismatches were the point
  violations.length = 0
})

t.test('a 429 without its required Retry-After header is recorded', async (t) => {
  const app = await build(t, { LOGIN_RATE_LIMIT: '1/m' }, {
    setup: (app) => app.addHook('onSend', async (_request, reply, payload) => {
      reply.removeHeader('retry-after')
      return payload
    })
  })
  const user = await createUser(app)
  await login(app, user)
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(res.statusCode, 429)
  const violations = contractViolations(app)
  t.same(violations, ['POST /auth/login 429: lacks the required header retry-after'])
  violations.length = 0
})

t.test('answers that match the document record nothing', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  await login(app, user)
  const wrong = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: 'Wrong-pass-1' } })
  t.equal(wrong.statusCode, 401)
  const missing = await app.inject({ method: 'GET', url: '/api/users/00000000-0000-4000-8000-000000000000' })
  t.equal(missing.statusCode, 401)
  t.same(contractViolations(app), [])
})
