import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import {
  catalogueCode, catalogueEntry, denialOf, DETAIL, MethodNotAllowed, NotFound, RateLimited, ValidationFailed, type ErrorCode
} from '../src/errors.js'
import { IdParams } from '../schemas/common.js'
import { toValidationFailed } from '../src/validation/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * What an error answers (status, catalogue code, message, field messages), as the one
     * handler works it out; undefined for an unexpected failure (a 500). The portal's pages show
     * the same answer as HTML.
     */
    errorAnswerOf (error: Error, request: FastifyRequest): ErrorAnswer | undefined
  }
}

export interface ErrorAnswer {
  status: number
  code: ErrorCode
  message: string
  errors?: Record<string, string[]>
}

/** Errors raised by Fastify, its plugins and Node's HTTP parser, as the catalogue codes they answer. */
const FOREIGN_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  // from the router, through `frameworkErrors` in buildApp: the default message echoes the path
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_UNDER_PRESSURE: 'service_unavailable',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
  HPE_HEADER_OVERFLOW: 'headers_too_large'
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * The methods some route answers at `url` (its query ignored). The `OPTIONS *` that @fastify/cors
 * adds matches every path, so an OPTIONS route counts only when it names the path itself: an
 * unknown path has no method, whatever CORS_ORIGINS says.
 */
export function methodsAt (fastify: FastifyInstance, url: string): string[] {
  const path = url.split('?', 1)[0] ?? '/'
  return METHODS.filter((method) => {
    const route = fastify.findRoute({ method, url: path })
    return route !== null && !(method === 'OPTIONS' && route.params['*'] !== undefined)
  })
}

interface Answer { status: number, code: ErrorCode, message: string }

interface ErrorBody {
  error: string
  message: string
  code: string
  errors?: Record<string, string[]>
  details?: ValidationFailed['details']
  request_id?: string
  reason?: string
  required_roles?: string[]
}

type Thrown = Error & { code?: string, statusCode?: number }

/**
 * What a thrown error answers: a catalogued error its own code and message, a Fastify or Node
 * error its catalogue entry, any other 4xx `bad_request`; undefined for an unexpected failure.
 */
function answerOf (error: Thrown): Answer | undefined {
  const own = catalogueCode(error)
  if (own !== undefined) return { status: error.statusCode ?? catalogueEntry(own).status, code: own, message: error.message }
  const code = FOREIGN_CODES[error.code ?? '']
  if (code !== undefined) {
    const entry = catalogueEntry(code)
    return { status: error.statusCode ?? entry.status, code, message: entry.message === DETAIL ? error.message : entry.message }
  }
  const status = error.statusCode ?? 500
  return status < 500 ? { status, code: 'bad_request', message: catalogueEntry('bad_request').message } : undefined
}

/** The `error` field: the catalogue's title where it fixes one, else the status's reason phrase. */
function titleOf (code: ErrorCode, status: number): string {
  return catalogueEntry(code).title ?? STATUS_CODES[status] ?? 'Error'
}

/** RFC 6750 §3: no error attribute when credentials were simply absent. */
function wwwAuthenticate (code: ErrorCode, message: string): string | undefined {
  if (code === 'token_missing') return 'Bearer realm="gatehouse"'
  if (code === 'token_invalid' || code === 'token_expired' || code === 'token_revoked' || code === 'refresh_token_reused') {
    return `Bearer realm="gatehouse", error="invalid_token", error_description="${message}"`
  }
  return undefined
}

/**
 * Fastify's `clientErrorHandler` (passed by buildApp): a request Node's parser refuses (a CR or
 * LF inside a header value, a space in a header name, oversized headers) still gets an
 * ErrorResponse, where Fastify's default writes `{error, message, statusCode}` without a code.
 */
export function clientErrorHandler (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const code = FOREIGN_CODES[err.code ?? ''] ?? 'bad_request'
  const { status, message } = catalogueEntry(code)
  const title = titleOf(code, status)
  const body = JSON.stringify({ error: title, message, code })
  // code and message only: Node's error also holds `rawPacket`, the request's bytes, cookies and Authorization included
  this.log.debug({ code: err.code, message: err.message }, 'client error')
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${title}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}

/**
 * The one error handler: every failure becomes an ErrorResponse (docs/api.md, "Errors").
 * Catalogued errors keep their code and message, Fastify's and Node's are answered as their
 * catalogue entry, and anything else is a 500 that shows nothing but the request id (the log
 * line has the rest).
 */
export default fp(async function errorHandlerPlugin (fastify: FastifyInstance) {
  const withDetails = fastify.config.validationErrorDetails
  const validateIdParams = fastify.validatorCompiler?.({ schema: IdParams, method: 'GET', url: '', httpPart: 'params' })

  /**
   * The router refuses a path parameter past its bound (maxParamLength, 100) before any route is
   * found. Every path parameter of this API is a UUID `id`, so the longest segment is validated as
   * one and answered as any other malformed id: 422 naming `id`, not 414 for a short URI.
   */
  function overLongId (request: FastifyRequest): ValidationFailed | undefined {
    const segments = (request.url.split('?', 1)[0] ?? '').split('/')
    const id = segments.reduce((longest, segment) => (segment.length > longest.length ? segment : longest), '')
    if (validateIdParams === undefined || validateIdParams({ id }) === true) return undefined
    return toValidationFailed((validateIdParams.errors ?? []) as never, { context: 'params', data: { id }, withDetails, schema: IdParams })
  }

  const denialDetails = fastify.config.authzDenialDetails

  /** A 403 says why (docs/api.md#why-access-was-denied); a missing grant is RFC 6750's insufficient_scope. */
  function denied (reply: FastifyReply, body: ErrorBody, error: Thrown): ErrorBody {
    const denial = denialOf(error)
    if (denial === undefined) return body
    const { reason, requiredRoles } = denial
    if (reason === 'missing_role' || reason === 'superuser_required') reply.header('www-authenticate', 'Bearer realm="gatehouse", error="insufficient_scope"')
    return requiredRoles !== undefined && denialDetails ? { ...body, reason, required_roles: requiredRoles } : { ...body, reason }
  }

  function send (reply: FastifyReply, status: number, body: ErrorBody) {
    const challenge = status === 401 ? wwwAuthenticate(body.code as ErrorCode, body.message) : undefined
    if (challenge !== undefined) reply.header('www-authenticate', challenge)
    return reply.code(status).send(body)
  }

  /** Validation and router errors as the catalogued errors they answer. */
  function normalized (error: FastifyError | Thrown, request: FastifyRequest): Thrown {
    if ('validation' in error && error.validation) {
      const part = error.validationContext ?? 'body'
      const data = part === 'body' ? request.body : part === 'querystring' ? request.query : request.params
      const schema = (request.routeOptions.schema as Record<string, unknown> | undefined)?.[part]
      return toValidationFailed(error.validation as never, { context: part, data, withDetails, schema })
    }
    return error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? overLongId(request) ?? error : error
  }

  fastify.decorate('errorAnswerOf', function (error: Error, request: FastifyRequest): ErrorAnswer | undefined {
    const thrown = normalized(error as Thrown, request)
    const answer = answerOf(thrown)
    return answer !== undefined && thrown instanceof ValidationFailed ? { ...answer, errors: thrown.errors } : answer
  })

  function handle (thrown: FastifyError | Thrown, request: FastifyRequest, reply: FastifyReply) {
    const error = normalized(thrown, request)
    const answer = answerOf(error)
    if (answer === undefined) {
      request.log.error({ err: error }, 'request failed')
      return internalError(reply, request)
    }
    const { status, code, message } = answer
    if (status < 500) request.log.info({ code }, 'request rejected')
    if (error instanceof RateLimited) reply.header('retry-after', String(error.retryAfter))
    const title = titleOf(code, status)
    if (error instanceof ValidationFailed) return send(reply, status, { error: title, message, code, errors: error.errors, details: error.details })
    return send(reply, status, denied(reply, { error: title, message, code }, error))
  }

  function internalError (reply: FastifyReply, request: FastifyRequest) {
    const { status, message } = catalogueEntry('internal_error')
    return send(reply, status, { error: titleOf('internal_error', status), message, code: 'internal_error', request_id: request.id })
  }

  // a failure while shaping an error must not fall through to Fastify's fallback body, which shows the message
  fastify.setErrorHandler(function (error: FastifyError | Thrown, request: FastifyRequest, reply: FastifyReply) {
    try {
      return handle(error, request, reply)
    } catch (err) {
      request.log.error({ err, cause: error }, 'the error handler failed')
      return internalError(reply, request)
    }
  })

  // 405 with Allow when the path exists under another method, else 404
  fastify.setNotFoundHandler(function (request: FastifyRequest, reply: FastifyReply) {
    const allowed = methodsAt(fastify, request.url)
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      throw new MethodNotAllowed(request.method)
    }
    throw new NotFound('The requested resource was not found')
  })
}, { name: 'error-handler', dependencies: ['config'] })
