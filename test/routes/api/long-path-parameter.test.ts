// Proves plugins/error-handler.ts.
import t from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'

const MALFORMED_ID = {
  error: 'Validation failed',
  message: 'The given data was invalid',
  code: 'validation_failed',
  errors: { id: ['The id field must not exceed 36 characters', 'The id field is invalid'] }
}

t.test('GET /api/users/ + 101 × a answers 422 validation_failed for the id, as any other malformed id, not 414', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: token } = await login(app, admin)
  const atBound = await app.inject({ method: 'GET', url: `/api/users/${'a'.repeat(40)}`, headers: authHeader(token) })
  t.equal(atBound.statusCode, 422)
  t.same(atBound.json(), MALFORMED_ID, 'a 40-character id, through the route')
  for (const length of [101, 1000]) {
    const res = await app.inject({ method: 'GET', url: `/api/users/${'a'.repeat(length)}`, headers: authHeader(token) })
    t.equal(res.statusCode, 422, `${length} characters`)
    t.same(res.json(), MALFORMED_ID, `${length} characters`)
  }
  for (const method of ['PUT', 'DELETE'] as const) {
    const res = await app.inject({ method, url: `/api/users/${'a'.repeat(101)}`, headers: authHeader(token), payload: {} })
    t.equal(res.statusCode, 422, method)
    t.same(res.json(), MALFORMED_ID, method)
  }
})

t.test('the router still refuses a path parameter past 100 characters before any route runs', async (t) => {
  const app = await build(t)
  // without a token a routed request would be 401: the answer comes from the router's refusal
  const res = await app.inject({ method: 'GET', url: `/api/users/${'a'.repeat(101)}` })
  t.equal(res.statusCode, 422)
  t.same(res.json(), MALFORMED_ID)
  const routed = await app.inject({ method: 'GET', url: `/api/users/${'a'.repeat(100)}` })
  t.equal(routed.statusCode, 401, 'at the bound, the route (and its guard) runs')
})
