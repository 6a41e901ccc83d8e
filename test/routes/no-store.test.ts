// Proves plugins/no-store.ts.
import type { InjectOptions } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login } from '../helper.js'

t.test('every response carrying user data or tokens says Cache-Control: no-store', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const admin = await createUser(app, { roles: ['admin'] })
  const tokens = await login(app, admin)
  const auth = authHeader(tokens.access_token)
  const requests: Array<[InjectOptions, number]> = [
    [{ method: 'GET', url: '/auth/me', headers: auth }, 200],
    [{ method: 'GET', url: '/api/users', headers: auth }, 200],
    [{ method: 'GET', url: `/api/users/${admin.id}`, headers: auth }, 200],
    [{ method: 'POST', url: '/api/users', headers: auth, payload: { email: 'new@example.com', password: 'Correct-Horse-9', name: 'New', age: 30 } }, 201],
    [{ method: 'PUT', url: `/api/users/${admin.id}`, headers: auth, payload: { name: 'Renamed' } }, 200],
    [{ method: 'GET', url: '/api/audit', headers: auth }, 200],
    [{ method: 'POST', url: '/auth/login', payload: { email: admin.email, password: admin.password } }, 200],
    [{ method: 'POST', url: '/api/auth/login', payload: { email: admin.email, password: admin.password } }, 200],
    [{ method: 'POST', url: '/auth/refresh', payload: { refresh_token: tokens.refresh_token } }, 200],
    [{ method: 'POST', url: '/auth/register', payload: { email: 'reg@example.com', password: 'Correct-Horse-9', name: 'Reg', age: 30 } }, 201]
  ]
  for (const [request, status] of requests) {
    const name = `${request.method} ${request.url}`
    const res = await app.inject(request)
    t.equal(res.statusCode, status, name)
    t.equal(res.headers['cache-control'], 'no-store', name)
    t.equal(res.headers.pragma, 'no-cache', name)
  }
})

t.test('a response without user data keeps the default caching headers (negative control)', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/health' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], undefined)
  t.equal(res.headers.pragma, undefined)
})
