import type { FastifyInstance } from 'fastify'
import t from 'tap'
import cookiesPlugin from '../../plugins/cookies.js'
import countersPlugin from '../../plugins/counters.js'
import dbPlugin from '../../plugins/db.js'
import errorHandlerPlugin from '../../plugins/error-handler.js'
import guardPlugin from '../../plugins/guard.js'
import servicesPlugin from '../../plugins/services.js'
import { authHeader, buildBare, createUser, type TestContext } from '../helper.js'
import { CSRF_REJECTED, INSUFFICIENT_SCOPE, MISSING_ADMIN } from '../patterns.js'

/*
 * plugins/guard.ts on a bare Fastify with only what it depends on (config, cookies, the services
 * and their store) and the error handler: its hook guards the scope it is added to, nothing else.
 */

const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }

async function guardedApp (t: TestContext): Promise<FastifyInstance> {
  return await buildBare(t, [cookiesPlugin, dbPlugin, countersPlugin, servicesPlugin, errorHandlerPlugin, guardPlugin], async (app) => {
    await app.register(async (api) => {
      api.addHook('onRequest', api.authenticate)
      api.get('/me', async (request) => ({ user_id: request.claims?.user_id }))
      api.post('/me', async (request) => ({ user_id: request.claims?.user_id }))
      api.get('/admin', { config: { access: { roles: ['admin'] } } }, async () => ({ admin: true }))
    }, { prefix: '/api' })
    app.get('/open', async () => ({ open: true }))
  })
}

async function accessTokenOf (app: FastifyInstance, roles: string[] = ['user']): Promise<{ id: string, token: string }> {
  const { id } = await createUser(app, { roles })
  const user = await app.services.users.findById(id)
  if (user === undefined) throw new Error('no user')
  const pair = await app.services.sessions.start(user)
  return { id, token: pair.accessToken }
}

t.test('a guarded route without a credential is 401 token_missing with a bare Bearer challenge', async (t) => {
  const app = await guardedApp(t)
  const res = await app.inject({ method: 'GET', url: '/api/me' })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"')
  t.same(res.json(), MISSING)
})

t.test('a malformed bearer token is 401 token_invalid', async (t) => {
  const app = await guardedApp(t)
  const res = await app.inject({ method: 'GET', url: '/api/me', headers: authHeader('not.a.token') })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token is invalid"')
  t.same(res.json(), INVALID)
})

t.test('a valid access token passes, and the handler reads its claims', async (t) => {
  const app = await guardedApp(t)
  const { id, token } = await accessTokenOf(app)
  const res = await app.inject({ method: 'GET', url: '/api/me', headers: authHeader(token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { user_id: id })
})

t.test('a route\'s declared roles are checked after the token: 403 missing_role naming them', async (t) => {
  const app = await guardedApp(t)
  const user = await accessTokenOf(app)
  const denied = await app.inject({ method: 'GET', url: '/api/admin', headers: authHeader(user.token) })
  t.equal(denied.statusCode, 403)
  t.equal(denied.headers['www-authenticate'], INSUFFICIENT_SCOPE)
  t.same(denied.json(), MISSING_ADMIN)
  const admin = await accessTokenOf(app, ['user', 'admin'])
  const allowed = await app.inject({ method: 'GET', url: '/api/admin', headers: authHeader(admin.token) })
  t.equal(allowed.statusCode, 200)
  t.same(allowed.json(), { admin: true })
})

t.test('a cookie-authenticated state change from a foreign origin is 403 csrf_rejected; from its own origin it passes', async (t) => {
  const app = await guardedApp(t)
  const { id, token } = await accessTokenOf(app)
  const cookies = { access_token: token }
  const foreign = await app.inject({ method: 'POST', url: '/api/me', cookies, headers: { origin: 'https://evil.example' } })
  t.equal(foreign.statusCode, 403)
  t.same(foreign.json(), CSRF_REJECTED)
  const own = await app.inject({ method: 'POST', url: '/api/me', cookies, headers: { origin: 'http://localhost:80' } })
  t.equal(own.statusCode, 200)
  t.same(own.json(), { user_id: id })
})

t.test('a route outside the guarded scope is not guarded (negative control: encapsulation, not URL matching)', async (t) => {
  const app = await guardedApp(t)
  const res = await app.inject({ method: 'GET', url: '/open' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { open: true })
})
