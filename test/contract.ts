import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'

/*
 * Every response a test receives from an app made by build() is checked against that app's own
 * document (GET /openapi.json): the status is documented for the operation, the headers a client reads are
 * documented on that response (and the required ones are there), and the body is valid against
 * the response's schema. A mismatch is recorded and fails the test at teardown, so the document
 * cannot drift from what the server does.
 */

/** Headers the service sets for a client to read: each must be documented where it appears. */
const API_HEADERS = ['location', 'set-cookie', 'www-authenticate', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']

interface Contract { app: FastifyInstance, document?: OpenAPI.Document, violations: string[] }
const contracts = new WeakMap<FastifyInstance, Contract>()

/** One Ajv per set of components (the same for nearly every app), one compiled validator per schema. */
const validators = new Map<string, { ajv: Ajv2020, compiled: Map<string, ValidateFunction> }>()

function validatorOf (document: OpenAPI.Document, schema: unknown): ValidateFunction {
  const components = JSON.stringify(document.components ?? {})
  let entry = validators.get(components)
  if (entry === undefined) {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi')
    entry = { ajv, compiled: new Map() }
    validators.set(components, entry)
  }
  // the document's references are to its own components: point them at the schema added above
  const source = JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')
  let validate = entry.compiled.get(source)
  if (validate === undefined) {
    validate = entry.ajv.compile(JSON.parse(source))
    entry.compiled.set(source, validate)
  }
  return validate
}

/** `/api/users/:id/` as the document writes it: `/api/users/{id}`. */
function documentPath (url: string): string {
  const path = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
  return path.length > 1 ? path.replace(/\/$/, '') : path
}

function resolveHeader (document: OpenAPI.Document, header: OpenAPI.HeaderObject | OpenAPI.ReferenceObject): OpenAPI.HeaderObject {
  if (!('$ref' in header)) return header
  return document.components?.headers?.[header.$ref.split('/').pop() ?? ''] as OpenAPI.HeaderObject
}

function checkHeaders (document: OpenAPI.Document, response: OpenAPI.ResponseObject, sent: Record<string, unknown>): string[] {
  const documented = new Map(Object.entries(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), resolveHeader(document, h)]))
  const problems: string[] = []
  for (const name of API_HEADERS) {
    if (sent[name] !== undefined && !documented.has(name)) problems.push(`sent the undocumented header ${name}`)
  }
  for (const [name, header] of documented) {
    const value = sent[name]
    if (value === undefined) {
      if (header.required === true) problems.push(`lacks the required header ${name}`)
    } else if ((header.schema as OpenAPI.SchemaObject | undefined)?.type === 'integer' && !/^\d+$/.test(String(value))) {
      problems.push(`sent ${name}: ${String(value)}, not an integer`)
    }
  }
  return problems
}

function checkBody (document: OpenAPI.Document, response: OpenAPI.ResponseObject, payload: unknown): string[] {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? '' : undefined
  if (text === undefined) return [] // a stream: the docs page's assets
  const content = response.content
  if (content === undefined) return text === '' ? [] : [`sent a body where the document has none: ${text.slice(0, 200)}`]
  const schema = content['application/json']?.schema
  if (schema === undefined) return []
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return [`sent a body that is not JSON: ${text.slice(0, 200)}`]
  }
  const validate = validatorOf(document, schema)
  if (validate(body)) return []
  return (validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message ?? 'is invalid'} (${e.schemaPath}): ${text.slice(0, 200)}`)
}

/** What one answer breaks of the document, or nothing when its route is not a documented operation. */
function check (contract: Contract, request: FastifyRequest, reply: FastifyReply, payload: unknown): string[] {
  const url = request.routeOptions.url
  // a route that declares no response schema promises nothing (a test's own route): every route of the app declares one
  if (url === undefined || request.routeOptions.schema?.response === undefined) return []
  const document = documentOf(contract)
  const method = request.method === 'HEAD' ? 'get' : request.method.toLowerCase()
  const operation = (document.paths?.[documentPath(url)] as Record<string, OpenAPI.OperationObject> | undefined)?.[method]
  if (operation === undefined) return []
  const response = (operation.responses?.[String(reply.statusCode)] ?? operation.responses?.default) as OpenAPI.ResponseObject | undefined
  if (response === undefined) return [`answered ${reply.statusCode}, which the document does not list`]
  const problems = checkHeaders(document, response, reply.getHeaders())
  return request.method === 'HEAD' ? problems : [...problems, ...checkBody(document, response, payload)]
}

/**
 * The app's own document: what GET /openapi.json serves (less the `servers` entry it adds per
 * request), read without a request so no test sees an extra log line or hit, and only when a
 * first answer needs it, so building an app costs no synchronous work (a test of load shedding
 * measures the event loop right after build()).
 */
function documentOf (contract: Contract): OpenAPI.Document {
  contract.document ??= JSON.parse(JSON.stringify(contract.app.swagger())) as OpenAPI.Document
  return contract.document
}

/** Adds the check to an app before ready() (an onSend hook added last, so every other hook has run). */
export function watchContract (app: FastifyInstance): void {
  const contract: Contract = { app, violations: [] }
  contracts.set(app, contract)
  app.addHook('onSend', async (request, reply, payload) => {
    let problems: string[]
    try {
      problems = check(contract, request, reply, payload)
    } catch (err) {
      problems = [`could not be checked: ${(err as Error).message}`]
    }
    for (const problem of problems) contract.violations.push(`${request.method} ${request.url} ${reply.statusCode}: ${problem}`)
    return payload
  })
}

/** The mismatches recorded so far (the array itself: a test that provokes some on purpose empties it). */
export function contractViolations (app: FastifyInstance): string[] {
  return contracts.get(app)?.violations ?? []
}

/** Throws when any answer did not match the document (run at teardown by build()). */
export function assertContract (app: FastifyInstance): void {
  const violations = contractViolations(app)
  if (violations.length > 0) {
    throw new Error(`${violations.length} response(s) do not match GET /openapi.json:\n${violations.join('\n')}`)
  }
}
