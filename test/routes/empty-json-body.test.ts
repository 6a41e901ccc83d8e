// Proves plugins/json-body.ts and plugins/validation.ts.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login, tokenResponse } from './../helper.js'

/*
 * Generated clients (orval among them) send `Content-Type: application/json` on every request
 * that may have a body, with no body when the caller gave none. An empty body is an absent
 * body: validated as {} where the route has a body schema, exactly as without the header.
 */
const JSON_HEADER = { 'content-type': 'application/json' }
const SELF = 'http://localhost:80'
const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

async function signedIn (app: FastifyInstance) {
  const user = await createUser(app, { email: 'ada@example.com', name: 'Ada', roles: ['user'] })
  return { user, ...(await login(app, user, { remember: true })) }
}

t.test('POST /auth/refresh with the cookie and an empty JSON body rotates the pair', async (t) => {
  const app = await build(t)
  const { refresh_token: refreshToken } = await signedIn(app)
  const res = await app.inject({ method: 'POST', url: '/auth/refresh', headers: { ...JSON_HEADER, origin: SELF }, cookies: { refresh_token: refreshToken }, payload: '' })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body, { access_token: JWT, refresh_token: JWT, expires_at: ISO, refresh_expires_at: ISO, expires_in: Number })
  t.not(body.refresh_token, refreshToken)
  t.strictSame(body, tokenResponse(body, body.user))
})

t.test('POST /auth/logout?scope=others with a bearer token and an empty JSON body answers 204', async (t) => {
  const app = await build(t)
  const { access_token: accessToken } = await signedIn(app)
  const res = await app.inject({ method: 'POST', url: '/auth/logout?scope=others', headers: { ...JSON_HEADER, ...authHeader(accessToken) }, payload: '' })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
})

t.test('PUT /api/users/{id} with an empty JSON body changes nothing and answers the user', async (t) => {
  const app = await build(t)
  const { user, access_token: accessToken } = await signedIn(app)
  const before = await app.inject({ method: 'GET', url: `/api/users/${user.id}`, headers: authHeader(accessToken) })
  const res = await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { ...JSON_HEADER, ...authHeader(accessToken) }, payload: '' })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(body, { ...before.json(), updated_at: body.updated_at })
})

t.test('POST /auth/login with an empty JSON body is validated as {}: 422 naming both fields', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/auth/login', headers: JSON_HEADER, payload: '' })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: { email: ['The email field is required'], password: ['The password field is required'] }
  })
})
