import t from 'tap'
import { build } from '../helper.js'

t.test('GET /health answers ok while the process is alive', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/health' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /ready answers ok when the database answers', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /ready answers 503 when the database does not', async (t) => {
  const app = await build(t)
  t.intercept(app.store, 'ping', { value: async () => { throw new Error('connection refused') } })
  const res = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { error: 'Service Unavailable', message: 'The service is temporarily unavailable', code: 'service_unavailable' })
})
