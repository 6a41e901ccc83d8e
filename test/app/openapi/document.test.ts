import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'
import t, { type Test } from 'tap'
import { errorCodes } from '../../../src/errors.js'
import { build } from '../../helper.js'

/*
 * The document as generators, linters and validating proxies read it: a server to call, named
 * schemas instead of inline copies, standard JSON Schema only, and every header a client reads.
 */
async function documentOf (t: Test, values: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<OpenAPI.Document> {
  const app = await build(t, values)
  const res = await app.inject({ method: 'GET', url: '/openapi.json', headers })
  t.equal(res.statusCode, 200)
  return res.json()
}

function operation (document: OpenAPI.Document, method: 'get' | 'post' | 'put' | 'delete', path: string): OpenAPI.OperationObject {
  return document.paths?.[path]?.[method] as OpenAPI.OperationObject
}

function response (document: OpenAPI.Document, method: 'get' | 'post' | 'put' | 'delete', path: string, status: number): OpenAPI.ResponseObject {
  return operation(document, method, path).responses?.[String(status)] as OpenAPI.ResponseObject
}

t.test('servers names PUBLIC_URL when set, else the origin the document was asked at', async (t) => {
  const configured = await documentOf(t, { PUBLIC_URL: 'https://auth.example.org/gate/' })
  t.same(configured.servers, [{ url: 'https://auth.example.org/gate', description: 'This service (PUBLIC_URL)' }])
  const asked = await documentOf(t, {}, { host: 'gatehouse.internal:8080' })
  t.same(asked.servers, [{ url: 'http://gatehouse.internal:8080', description: 'This service' }])
})

t.test('the response bodies are named components, referenced wherever they appear', async (t) => {
  const document = await documentOf(t)
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
  const body = (method: 'get' | 'post' | 'put' | 'delete', path: string, status: number) => response(document, method, path, status).content?.['application/json']?.schema
  t.same(body('post', '/auth/login', 200), ref('TokenResponse'))
  t.same(body('post', '/api/auth/login', 200), ref('TokenResponse'))
  t.same(body('post', '/auth/refresh', 200), ref('TokenResponse'))
  t.same(body('post', '/auth/register', 201), ref('TokenResponse'))
  t.same(body('get', '/auth/me', 200), ref('User'))
  t.same(body('post', '/api/users', 201), ref('User'))
  t.same(body('get', '/api/users/{id}', 200), ref('User'))
  t.same(body('put', '/api/users/{id}', 200), ref('User'))
  t.same(body('get', '/api/users', 200), ref('UserList'))
  t.same(body('get', '/api/audit', 200), ref('AuditList'))
  t.same(body('post', '/api/auth/change-password', 200), ref('Message'))
  const schemas = document.components?.schemas ?? {}
  t.same(schemas.TokenResponse?.properties?.user, ref('User'))
  t.same(schemas.UserList?.properties, { data: { type: 'array', items: ref('User') }, pagination: ref('PaginationMeta') })
  t.same(schemas.AuditList?.properties, { data: { type: 'array', items: ref('AuditEvent') }, pagination: ref('PaginationMeta') })
  // no inline copy of the user object anywhere: its one definition is the component
  const text = JSON.stringify(document)
  t.equal(text.split('"updated_at":').length - 1, 1, 'one user object schema in the whole document')
})

t.test('ErrorResponse.code is the enum of every code the server writes', async (t) => {
  const document = await documentOf(t)
  const code = document.components?.schemas?.ErrorResponse?.properties?.code
  t.same(code, { type: 'string', enum: errorCodes(), description: 'A stable code to switch on' })
  t.ok(errorCodes().includes('validation_failed') && errorCodes().includes('rate_limited') && errorCodes().includes('bad_request'))
})

t.test('not blank is published as the standard pattern \\S; the private keyword never appears', async (t) => {
  const document = await documentOf(t)
  t.notMatch(JSON.stringify(document), /notBlank/)
  const login = operation(document, 'post', '/auth/login').requestBody as OpenAPI.RequestBodyObject
  t.same(login.content['application/json']?.schema, {
    additionalProperties: false,
    type: 'object',
    required: ['email', 'password'],
    properties: {
      email: { format: 'email', maxLength: 254, type: 'string', pattern: '\\S' },
      password: { maxLength: 1024, type: 'string', pattern: '\\S' },
      remember: { type: 'boolean' }
    }
  })
})

t.test('Location on 201, Set-Cookie where cookies are set or cleared, RateLimit-* on limited routes', async (t) => {
  const document = await documentOf(t)
  const headers = (method: 'get' | 'post' | 'put' | 'delete', path: string, status: number) => Object.keys(response(document, method, path, status).headers ?? {})
  const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']
  t.same(headers('post', '/api/users', 201), ['Location'])
  t.same(headers('post', '/auth/login', 200), [...rateLimit, 'Set-Cookie'])
  t.same(headers('post', '/auth/refresh', 200), [...rateLimit, 'Set-Cookie'])
  t.same(headers('post', '/auth/logout', 204), ['Set-Cookie'])
  t.same(headers('post', '/auth/register', 201), rateLimit)
  t.same(headers('post', '/api/auth/change-password', 422), rateLimit)
  t.same(headers('get', '/api/users', 401), ['WWW-Authenticate'])
  t.same(headers('get', '/api/users', 200), [])
  t.same(document.components?.headers?.['Retry-After'], { description: 'Seconds until a new attempt may succeed', required: true, schema: { type: 'integer' } })
})

t.test('the document says what verify-2fa and disable-2fa accept, and what /auth/verify never answers', async (t) => {
  const app = await build(t, { ENABLE_TOTP: true, DATA_ENCRYPTION_KEYS: `t1:${Buffer.alloc(32, 9).toString('base64')}` })
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenAPI.Document
  const exactlyOne = [{ properties: { code: {} }, required: ['code'] }, { properties: { recovery_code: {} }, required: ['recovery_code'] }]
  for (const path of ['/auth/verify-2fa', '/auth/disable-2fa']) {
    const body = document.paths?.[path]?.post?.requestBody as OpenAPI.RequestBodyObject | undefined
    t.same((body?.content['application/json']?.schema as OpenAPI.SchemaObject | undefined)?.oneOf, exactlyOne, `${path}: exactly one of code and recovery_code`)
  }
  t.same(document.tags?.find((tag) => tag.name === 'two-factor'), { name: 'two-factor', description: 'TOTP two-factor sign-in: enrolment, recovery codes, turning it off (switched on)' })
  const verify = document.paths?.['/auth/verify']
  for (const method of ['post', 'put', 'patch', 'delete', 'options'] as const) {
    t.same(Object.keys(verify?.[method]?.responses ?? {}).sort(), ['200', '400', '401', '403', '422', '500', '503'], `${method} /auth/verify: no 413 or 415, it reads no body`)
    t.equal(verify?.[method]?.requestBody, undefined)
  }
})
