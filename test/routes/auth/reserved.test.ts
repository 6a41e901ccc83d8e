import t from 'tap'
import { build } from '../../helper.js'

const PATHS = ['forgot-password', 'reset-password', 'send-otp', 'verify-otp', 'enable-2fa', 'verify-2fa'].map((name) => `/auth/${name}`)
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const NOT_IMPLEMENTED = { error: 'Not Implemented', message: 'This feature is not implemented', code: 'not_implemented' }

t.test('every method on every reserved route answers 501 not_implemented', async (t) => {
  const app = await build(t)
  for (const url of PATHS) {
    for (const method of METHODS) {
      const res = await app.inject({ method, url })
      t.equal(res.statusCode, 501, `${method} ${url}`)
      t.match(res.headers['content-type'], /^application\/json/, `${method} ${url}`)
      t.same(res.json(), NOT_IMPLEMENTED, `${method} ${url}`)
    }
  }
})

t.test('a reserved route answers 501 before reading a text/plain body', async (t) => {
  const app = await build(t)
  for (const url of PATHS) {
    for (const method of METHODS) {
      const res = await app.inject({ method, url, headers: { 'content-type': 'text/plain' }, payload: 'email=a@b.io' })
      t.equal(res.statusCode, 501, `${method} ${url}`)
      t.same(res.json(), NOT_IMPLEMENTED, `${method} ${url}`)
    }
  }
})

t.test('a reserved route answers 501 to a JSON body, even an invalid one', async (t) => {
  const app = await build(t)
  for (const payload of ['{"email":"a@b.io"}', '{not json']) {
    const res = await app.inject({ method: 'POST', url: '/auth/forgot-password', headers: { 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 501, payload)
    t.same(res.json(), NOT_IMPLEMENTED, payload)
  }
})

t.test('a path next to the reserved ones is not reserved', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/auth/forgot-passwords' })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' })
})
