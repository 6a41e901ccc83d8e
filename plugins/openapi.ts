import { STATUS_CODES } from 'node:http'
import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'
import { ErrorResponse } from '../schemas/errors.js'

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponse' }
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
/** Fastify parses a body for these (never for GET/HEAD), so they can answer 400, 413 and 415. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete', 'options'])

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
  const response: OpenAPI.ResponseObject = { description: STATUS_CODES[status] ?? 'Error', content: { 'application/json': { schema: ERROR_REF } } }
  if (status === 401) response.headers = { 'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750 §3)', schema: { type: 'string' } } }
  if (status === 429) response.headers = { 'Retry-After': { description: 'Seconds until a new attempt may succeed', schema: { type: 'integer' } } }
  if (status === 503) response.headers = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } } }
  return response
}

/**
 * Statuses any route can answer, whatever its own schema lists: every route can be shed with a
 * 503 by @fastify/under-pressure (plugins/security.ts) before its own hooks run, every route
 * can fail with a 500, and every route that reads a body can meet malformed JSON (400), an
 * oversized body (413) or another media type (415). Reserved routes answer 501 before they
 * read anything, so of these only the 503 applies to them.
 */
function completeResponses (method: string, operation: OpenAPI.OperationObject): OpenAPI.ResponsesObject {
  const responses: OpenAPI.ResponsesObject = { ...operation.responses }
  const reserved = responses['501'] !== undefined
  const extra = reserved ? [503] : BODY_METHODS.has(method) ? [400, 413, 415, 500, 503] : [500, 503]
  for (const status of extra) responses[String(status)] ??= errorResponse(status)
  for (const status of ['401', '429', '503']) {
    const response = responses[status] as OpenAPI.ResponseObject | undefined
    if (response !== undefined && response.headers === undefined) responses[status] = { ...response, headers: errorResponse(Number(status)).headers }
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

function completeOperation (method: string, path: string, operation: OpenAPI.OperationObject): OpenAPI.OperationObject {
  const responses = completeResponses(method, operation)
  const completed: OpenAPI.OperationObject = {
    ...operation,
    operationId: operation.operationId ?? operationIdOf(method, path),
    responses
  }
  const parameters = optionalDefaults(operation.parameters)
  if (parameters !== undefined) completed.parameters = parameters
  const body = operation.requestBody as OpenAPI.RequestBodyObject | undefined
  const bodySchema = body?.content['application/json']?.schema as OpenAPI.SchemaObject | undefined
  // an absent body is validated as {} (plugins/validation.ts): a body that requires nothing may be left out
  if (body !== undefined && bodySchema !== undefined && (bodySchema.required ?? []).length === 0) completed.requestBody = { ...body, required: false }
  for (const [status, response] of Object.entries(responses)) {
    // @fastify/swagger's placeholder for a response schema without a description
    if ('description' in response && response.description === 'Default Response') {
      responses[status] = { ...response, description: STATUS_CODES[Number(status)] ?? 'Response' }
    }
  }
  return completed
}

/**
 * The finished document: one operationId per operation (a declared one wins), the shared
 * statuses, and the paths as clients write them (a prefixed `/` route is served at
 * `/api/users` and `/api/users/` alike; the document names the first).
 */
export function completeDocument (document: OpenAPI.Document): OpenAPI.Document {
  const paths: OpenAPI.PathsObject = {}
  for (const [rawPath, item] of Object.entries(document.paths ?? {})) {
    const path = rawPath.length > 1 ? rawPath.replace(/\/$/, '') : rawPath
    const completed: Record<string, unknown> = { ...paths[path], ...item }
    for (const method of METHODS) {
      const operation = item?.[method]
      // one route with several methods shares one operation object: each gets its own copy
      if (operation !== undefined) completed[method] = completeOperation(method, path, operation)
    }
    paths[path] = completed as OpenAPI.PathItemObject
  }
  paths['/docs'] = { get: completeOperation('get', '/docs', DOCS_PAGE) } as OpenAPI.PathItemObject
  return { ...document, paths }
}

/**
 * The OpenAPI 3.1 document, generated by @fastify/swagger from the routes' own TypeBox schemas.
 * Registered before the routes so its onRoute hook sees every one of them. ErrorResponse is a
 * shared schema here, so it appears once under components and every error status `$ref`s it.
 * @see https://github.com/fastify/fastify-swagger
 */
export default fp(async function openapiPlugin (fastify: FastifyInstance) {
  fastify.addSchema(ErrorResponse)
  await fastify.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gatehouse',
        version: '0.1.0',
        description: 'Self-hosted authentication service: email/password sign-in, JWT access and refresh tokens, a guarded /api and a validated users API.',
        license: { name: 'MIT', identifier: 'MIT' }
      },
      // no servers: the document describes the origin it is served from
      tags: [
        { name: 'auth', description: 'Sign-in, token refresh, sign-out, the current user, registration' },
        { name: 'users', description: 'User management (admins; a user may read and update themself)' },
        { name: 'audit', description: 'The persisted security events (admins)' },
        { name: 'health', description: 'Liveness and readiness' },
        { name: 'reserved', description: 'Paths reserved for features to come: 501' },
        { name: 'docs', description: 'This document and its reference page' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The access token in `Authorization: Bearer`' },
          cookieAuth: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'The HTTP-only access_token cookie (state changes also need a trusted Origin)' }
        }
      }
    },
    // shared schemas keep their $id as their component name
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    transformObject: (documents) => completeDocument((documents as { openapiObject: OpenAPI.Document }).openapiObject)
  })
}, { name: 'openapi' })
