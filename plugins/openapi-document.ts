import { STATUS_CODES } from 'node:http'
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponse' }
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
/** Fastify parses a body for these (never for GET/HEAD), so they can answer 413 and 415. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete', 'options'])

export interface DocumentOptions {
  /** every `code` an ErrorResponse can carry (its enum) */
  codes: string[]
  /** PUBLIC_URL: published as `servers`; unset, GET /openapi.json names the origin it was asked at */
  publicUrl?: string | undefined
  /** `METHOD /path` of the routes that answer before any body is read (`config.readsNoBody`): never a 413 or 415 */
  bodyless?: ReadonlySet<string>
}

const integer = { type: 'integer' } as const
/** Headers the server adds on its own, published once under components.headers. */
const HEADERS: Record<string, OpenAPI.HeaderObject> = {
  'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750 §3); absent when a password, not a token, was wrong', schema: { type: 'string' } },
  'WWW-Authenticate-Scope': { description: 'On a 403 for a missing role or superuser: `Bearer realm="gatehouse", error="insufficient_scope"` (RFC 6750 §3.1)', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds until a new attempt may succeed', required: true, schema: integer },
  'Retry-After-Shed': { description: 'Retry-After: seconds to wait before trying again, when the request was shed under load', schema: integer },
  'RateLimit-Limit': { description: 'Requests allowed per window for this client address (IETF draft RateLimit header fields)', schema: integer },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: integer },
  'RateLimit-Reset': { description: 'Seconds until the window starts again', schema: integer }
}
const header = (component: string) => ({ $ref: `#/components/headers/${component}` })
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']

/** A stable SDK name from the method and the path: POST /auth/login → postAuthLogin, /api/users/{id} → getApiUsersById. */
export function operationIdOf (method: string, path: string): string {
  const words = path.split('/').filter((part) => part !== '').map((part) => {
    const param = /^\{(.+)\}$/.exec(part)?.[1]
    const word = param === undefined ? part : `by-${param}`
    return word.split(/[^a-zA-Z0-9]+/).filter(Boolean).map((w) => w[0]?.toUpperCase() + w.slice(1)).join('')
  })
  return method.toLowerCase() + words.join('')
}

function errorResponse (status: number): OpenAPI.ResponseObject {
  return { description: STATUS_CODES[status] ?? 'Error', content: { 'application/json': { schema: ERROR_REF } } }
}

/** The headers a status carries whatever the route: 401's challenge, 429's Retry-After (always sent) and 503's. */
function headersOf (status: string, rateLimited: boolean): Record<string, OpenAPI.ReferenceObject> {
  const headers: Record<string, OpenAPI.ReferenceObject> = {}
  // @fastify/rate-limit sets them in onRequest, so every answer of a limited route may carry them: a
  // 503 has them when the database is away, not when under-pressure shed the request first (hence optional)
  if (rateLimited) for (const name of RATE_LIMIT_HEADERS) headers[name] = header(name)
  if (status === '401') headers['WWW-Authenticate'] = header('WWW-Authenticate')
  if (status === '403') headers['WWW-Authenticate'] = header('WWW-Authenticate-Scope')
  if (status === '429') headers['Retry-After'] = header('Retry-After')
  if (status === '503') headers['Retry-After'] = header('Retry-After-Shed')
  return headers
}

/**
 * Statuses any route can answer, whatever its own schema lists: a malformed `%` escape in the
 * path is a 400 from the router, any route can be shed with a 503 by @fastify/under-pressure (plugins/security.ts) or fail with a 500, and a
 * route that reads a body can meet malformed JSON (400), an oversized body (413) or another
 * media type (415) — unless it answers before reading one (`readsBody` false: /auth/verify).
 * Reserved routes answer 501 before they read anything. An operation that
 * answers 429 is rate limited, so each of its answers carries the RateLimit headers.
 */
function completeResponses (method: string, operation: OpenAPI.OperationObject, readsBody: boolean): OpenAPI.ResponsesObject {
  const responses: OpenAPI.ResponsesObject = { ...operation.responses }
  const reserved = responses['501'] !== undefined
  const extra = reserved ? [400, 503] : BODY_METHODS.has(method) && readsBody ? [400, 413, 415, 500, 503] : [400, 500, 503]
  for (const status of extra) responses[String(status)] ??= errorResponse(status)
  const rateLimited = responses['429'] !== undefined
  for (const [status, value] of Object.entries(responses)) {
    const response = value as OpenAPI.ResponseObject
    // @fastify/swagger's placeholder for a response schema without a description
    const description = response.description === 'Default Response' ? STATUS_CODES[Number(status)] ?? 'Response' : response.description
    const headers = { ...headersOf(status, rateLimited), ...response.headers }
    responses[status] = Object.keys(headers).length > 0 ? { ...response, description, headers } : { ...response, description }
  }
  return responses
}

/** A query parameter with a default is optional for the client, whatever the schema's `required` says. */
function optionalDefaults (parameters: OpenAPI.OperationObject['parameters']): OpenAPI.OperationObject['parameters'] {
  return parameters?.map((p) => ('in' in p && p.in === 'query' && (p.schema as OpenAPI.SchemaObject | undefined)?.default !== undefined ? { ...p, required: false } : p))
}

/** The /docs page, served by @fastify/swagger-ui, whose own routes are hidden from the document. */
const DOCS_PAGE: OpenAPI.OperationObject = {
  tags: ['docs'],
  summary: 'The API reference page (Swagger UI, served from local assets)',
  responses: { 200: { description: 'OK', content: { 'text/html': { schema: { type: 'string' } } } } }
}

function completeOperation (method: string, path: string, operation: OpenAPI.OperationObject, readsBody = true): OpenAPI.OperationObject {
  const completed: OpenAPI.OperationObject = {
    ...operation,
    operationId: operation.operationId ?? operationIdOf(method, path),
    // declared on every operation: [] says "no credentials", so a linter knows it was meant
    security: operation.security ?? [],
    responses: completeResponses(method, operation, readsBody)
  }
  const parameters = optionalDefaults(operation.parameters)
  if (parameters !== undefined) completed.parameters = parameters
  const body = operation.requestBody as OpenAPI.RequestBodyObject | undefined
  const bodySchema = body?.content['application/json']?.schema as OpenAPI.SchemaObject | undefined
  // an absent (or empty) body is validated as {} (plugins/validation.ts): a body that requires nothing may be left out
  if (body !== undefined && bodySchema !== undefined && (bodySchema.required ?? []).length === 0) completed.requestBody = { ...body, required: false }
  return completed
}

/**
 * `notBlank` is the rule library's own keyword (src/validation/), which no other validator
 * knows: the published document says the same in standard JSON Schema, "at least one
 * character that is not white space" (`\S` matches exactly what String#trim keeps).
 * `notBreached` (a lookup in BREACHED_PASSWORDS_FILE) has no JSON Schema form and is left out.
 */
function standardKeywords (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(standardKeywords)
  if (typeof value !== 'object' || value === null) return value
  const { notBlank, notBreached: _server, ...rest } = value as Record<string, unknown>
  const copy = Object.fromEntries(Object.entries(rest).map(([key, v]) => [key, standardKeywords(v)]))
  if (notBlank !== true) return copy
  return copy.pattern === undefined ? { ...copy, pattern: '\\S' } : { ...copy, allOf: [{ pattern: '\\S' }] }
}

function completeComponents (components: OpenAPI.ComponentsObject | undefined, codes: string[]): OpenAPI.ComponentsObject {
  const schemas = { ...components?.schemas }
  const errorResponse = schemas.ErrorResponse
  if (errorResponse !== undefined) {
    schemas.ErrorResponse = { ...errorResponse, properties: { ...errorResponse.properties, code: { type: 'string', enum: codes, description: 'A stable code to switch on' } } }
  }
  return { ...components, schemas, headers: { ...components?.headers, ...HEADERS } }
}

/**
 * The finished document: one operationId and a security requirement per operation (a declared
 * one wins), the shared statuses and headers, standard keywords only, the paths as clients
 * write them (a prefixed `/` route is served at `/api/users` and `/api/users/` alike; the
 * document names the first), and the public URL when one is configured.
 */
export function completeDocument (document: OpenAPI.Document, options: DocumentOptions): OpenAPI.Document {
  const paths: OpenAPI.PathsObject = {}
  for (const [rawPath, item] of Object.entries(document.paths ?? {})) {
    const path = rawPath.length > 1 ? rawPath.replace(/\/$/, '') : rawPath
    const completed: Record<string, unknown> = { ...paths[path], ...item }
    for (const method of METHODS) {
      const operation = item?.[method]
      // one route with several methods shares one operation object: each gets its own copy
      if (operation !== undefined) completed[method] = completeOperation(method, path, operation, options.bodyless?.has(`${method.toUpperCase()} ${path}`) !== true)
    }
    paths[path] = completed as OpenAPI.PathItemObject
  }
  paths['/docs'] = { get: completeOperation('get', '/docs', DOCS_PAGE) } as OpenAPI.PathItemObject
  const servers = options.publicUrl === undefined ? {} : { servers: [{ url: options.publicUrl, description: 'This service (PUBLIC_URL)' }] }
  return standardKeywords({ ...document, ...servers, paths, components: completeComponents(document.components, options.codes) }) as OpenAPI.Document
}
