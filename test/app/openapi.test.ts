import diagnostics from 'node:diagnostics_channel'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { FastifyInstance, RouteOptions } from 'fastify'
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'
import t, { type Test } from 'tap'
import { build } from '../helper.js'
import { BEARER_DESCRIPTION } from '../../plugins/openapi.js'

/**
 * Every route any app registers, seen through Fastify's `fastify.initialization` channel (an
 * onRoute hook added before buildApp registers anything), so the list does not come from the
 * document under test.
 */
const registered: RouteOptions[] = []
diagnostics.subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance }
  fastify.addHook('onRoute', (route) => { registered.push(route) })
})

/**
 * The statuses each operation can answer: any path with a malformed `%` escape is a 400 from the
 * router; reserved paths answer 501; any route may be shed with a 503 by @fastify/under-pressure.
 */
const STATUSES: Record<string, number[]> = {
  'GET /health': [200, 400, 500, 503],
  'GET /ready': [200, 400, 500, 503],
  'POST /auth/login': [200, 400, 401, 413, 415, 422, 429, 500, 503],
  'POST /auth/refresh': [200, 400, 401, 403, 413, 415, 422, 429, 500, 503],
  'POST /auth/logout': [204, 400, 401, 403, 413, 415, 422, 500, 503],
  'GET /auth/me': [200, 400, 401, 500, 503],
  'POST /auth/register': [201, 400, 403, 413, 415, 422, 429, 500, 503],
  'POST /api/auth/login': [200, 400, 401, 413, 415, 422, 429, 500, 503],
  'POST /api/auth/change-password': [200, 400, 401, 403, 413, 415, 422, 429, 500, 503],
  'GET /api/users': [200, 400, 401, 403, 422, 500, 503],
  'GET /api/audit': [200, 400, 401, 403, 422, 500, 503],
  'POST /api/users': [201, 400, 401, 403, 413, 415, 422, 500, 503],
  'POST /api/users/import': [200, 400, 401, 403, 413, 415, 422, 500, 503],
  'GET /api/users/{id}': [200, 400, 401, 403, 404, 422, 500, 503],
  'PUT /api/users/{id}': [200, 400, 401, 403, 404, 413, 415, 422, 500, 503],
  'DELETE /api/users/{id}': [204, 400, 401, 403, 404, 413, 415, 422, 500, 503],
  // forward authentication answers every method alike (the body methods' 413 and 415 are the document's
  // general rule; the route answers before any body is read)
  'GET /auth/verify': [200, 400, 401, 403, 422, 500, 503],
  'TRACE /auth/verify': [200, 400, 401, 403, 422, 500, 503],
  // answered in onRequest, before any body is read: never 413 or 415
  ...Object.fromEntries(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => [`${m} /auth/verify`, [200, 400, 401, 403, 422, 500, 503]])),
  'GET /api/auth/sessions': [200, 400, 401, 500, 503],
  'DELETE /api/auth/sessions': [200, 400, 401, 403, 413, 415, 500, 503],
  'DELETE /api/auth/sessions/{id}': [204, 400, 401, 403, 404, 413, 415, 422, 500, 503],
  'GET /api/users/{id}/sessions': [200, 400, 401, 403, 404, 422, 500, 503],
  'DELETE /api/users/{id}/sessions': [200, 400, 401, 403, 404, 413, 415, 422, 500, 503],
  'GET /.well-known/jwks.json': [200, 400, 500, 503],
  'GET /api/keys': [200, 400, 401, 403, 500, 503],
  'POST /api/keys/rotate': [201, 400, 401, 403, 409, 413, 415, 500, 503],
  'DELETE /api/keys/{kid}': [204, 400, 401, 403, 404, 409, 413, 415, 422, 500, 503],
  'GET /openapi.json': [200, 400, 500, 503],
  'GET /docs': [200, 400, 500, 503]
}
const RESERVED = ['forgot-password', 'reset-password', 'send-otp', 'verify-otp', 'enable-2fa', 'verify-2fa']
const SIGNED_IN = [{ bearerAuth: [] }, { cookieAuth: [] }]

/** `/api/users/:id/` as the document writes it: `/api/users/{id}`. */
function documentPath (url: string): string {
  const path = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
  return path.length > 1 ? path.replace(/\/$/, '') : path
}

/**
 * The operations the app serves: HEAD mirrors GET, and @fastify/swagger-ui hides its routes; of
 * those, the page (/docs) is documented and its assets (/docs/static/*, /docs/json) are not.
 */
function servedOperations (): string[] {
  const operations = new Set<string>()
  for (const route of registered) {
    if (route.schema?.hide === true && documentPath(route.url) !== '/docs') continue
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (method !== 'HEAD') operations.add(`${method} ${documentPath(route.url)}`)
    }
  }
  return [...operations].sort()
}

async function documentOf (t: Test, app: FastifyInstance): Promise<OpenAPI.Document> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  return res.json()
}

function operationsOf (document: OpenAPI.Document): Map<string, OpenAPI.OperationObject> {
  const operations = new Map<string, OpenAPI.OperationObject>()
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      if (typeof operation === 'object' && operation !== null && 'responses' in operation) operations.set(`${method.toUpperCase()} ${path}`, operation)
    }
  }
  return operations
}

t.test('GET /openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const document = res.json<Record<string, unknown>>()
  const validator = new Validator()
  const result = await validator.validate(document)
  t.same(result.errors, undefined, 'no schema errors')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
  t.equal(document.openapi, '3.1.0')
})

t.test('every route the app serves is documented with its statuses, and nothing else is', async (t) => {
  registered.length = 0
  const app = await build(t)
  const document = await documentOf(t, app)
  const operations = operationsOf(document)
  const served = servedOperations()
  const expected = Object.keys(STATUSES)
  for (const name of RESERVED) {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) expected.push(`${method} /auth/${name}`)
  }
  t.same(served, expected.sort(), 'the app serves the documented routes')
  t.same([...operations.keys()].sort(), served, 'the document has exactly the served operations')

  for (const [key, operation] of operations) {
    const statuses = Object.keys(operation.responses ?? {}).map(Number).sort((a, b) => a - b)
    t.same(statuses, STATUSES[key] ?? [400, 501, 503], `${key} statuses`)
    t.ok((operation.tags ?? []).length === 1, `${key} has a tag`)
    t.match(operation.operationId, /^[a-z][A-Za-z0-9]+$/, `${key} has an operationId`)
    t.ok(typeof operation.summary === 'string' && operation.summary.length > 0, `${key} has a summary`)
    for (const status of statuses.filter((s) => s >= 400)) {
      const response = operation.responses?.[String(status)] as OpenAPI.ResponseObject
      t.same(response.content, { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } }, `${key} ${status} is an ErrorResponse`)
    }
  }
})

t.test('operationIds are unique and tags are declared', async (t) => {
  const app = await build(t)
  const document = await documentOf(t, app)
  const ids = [...operationsOf(document).values()].map((operation) => operation.operationId)
  t.equal(new Set(ids).size, ids.length)
  const declared = (document.tags ?? []).map((tag) => tag.name).sort()
  t.same(declared, ['audit', 'auth', 'docs', 'health', 'keys', 'reserved', 'sessions', 'users'])
  const used = new Set([...operationsOf(document).values()].flatMap((operation) => operation.tags ?? []))
  t.same([...used].sort(), declared)
  const operations = operationsOf(document)
  t.equal(operations.get('POST /auth/login')?.operationId, 'postAuthLogin')
  t.equal(operations.get('GET /api/users/{id}')?.operationId, 'getApiUsersById')
})

t.test('the security schemes are bearerAuth, cookieAuth and refreshCookie, required exactly where a credential is read', async (t) => {
  const app = await build(t)
  const document = await documentOf(t, app)
  t.same(document.components?.securitySchemes, {
    bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: BEARER_DESCRIPTION },
    cookieAuth: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'The HTTP-only access_token cookie (state changes also need a trusted Origin)' },
    refreshCookie: { type: 'apiKey', in: 'cookie', name: 'refresh_token', description: 'The HTTP-only refresh_token cookie, path /auth (needs a trusted Origin unless a Bearer header is sent)' }
  })
  const verify = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].map((m) => `${m} /auth/verify`)
  const secured = [...verify, 'GET /auth/me', 'POST /api/auth/change-password', 'GET /api/users', 'POST /api/users', 'GET /api/users/{id}', 'PUT /api/users/{id}', 'DELETE /api/users/{id}', 'GET /api/audit',
    'GET /api/auth/sessions', 'DELETE /api/auth/sessions', 'DELETE /api/auth/sessions/{id}', 'GET /api/users/{id}/sessions', 'DELETE /api/users/{id}/sessions',
    'GET /api/keys', 'POST /api/keys/rotate', 'DELETE /api/keys/{kid}', 'POST /api/users/import']
  // a credential that may be left out (the refresh token in the body instead; nothing at all to sign out locally)
  const optional: Record<string, unknown> = {
    'POST /auth/refresh': [{ refreshCookie: [] }, {}],
    'POST /auth/logout': [{ bearerAuth: [] }, { cookieAuth: [] }, { refreshCookie: [] }, {}]
  }
  for (const [key, operation] of operationsOf(document)) {
    if (secured.includes(key)) {
      t.same(operation.security, SIGNED_IN, `${key} needs a token`)
      t.ok(operation.responses?.['401'], `${key} documents 401`)
    } else if (key in optional) {
      t.same(operation.security, optional[key], `${key} takes a credential`)
    } else {
      t.same(operation.security, [], `${key} is public, and says so`)
    }
  }
})

t.test('401 carries WWW-Authenticate and 429 carries Retry-After; the response bodies are named components', async (t) => {
  const app = await build(t)
  const document = await documentOf(t, app)
  const login = operationsOf(document).get('POST /auth/login')
  const unauthorized = login?.responses?.['401'] as OpenAPI.ResponseObject
  const limited = login?.responses?.['429'] as OpenAPI.ResponseObject
  const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']
  t.same(Object.keys(unauthorized.headers ?? {}), [...rateLimit, 'WWW-Authenticate'])
  t.same(Object.keys(limited.headers ?? {}), [...rateLimit, 'Retry-After'])
  // a 503 of a limited route has the RateLimit headers when the database is away (the limit ran
  // first), not when the request was shed: documented, never required
  const shed = login?.responses?.['503'] as OpenAPI.ResponseObject
  t.same(Object.keys(shed.headers ?? {}), [...rateLimit, 'Retry-After'])
  t.same(document.components?.schemas?.ErrorResponse?.required, ['error', 'message', 'code'])
  t.same(Object.keys(document.components?.schemas ?? {}), ['ErrorResponse', 'User', 'PaginationMeta', 'UserList', 'TokenResponse', 'AuditEvent', 'AuditList', 'Message', 'Session', 'SessionList', 'RevokedSessions', 'Jwk', 'JwkSet', 'SigningKey', 'SigningKeyList', 'ImportUser', 'ImportResult'])
})
