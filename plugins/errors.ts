import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { catalogueCode, errorTitle, MethodNotAllowed, NotFound, ValidationFailed, wwwAuthenticate } from '../src/errors.js'
import { toValidationFailed } from '../src/validation/index.js'

/** Fastify's own 4xx errors, renamed into the catalogue's codes. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  // from the router, through `frameworkErrors` in buildApp: the default message echoes the path
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_MAX_PARAM_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_UNDER_PRESSURE: 'service_unavailable'
}

const PUBLIC_MESSAGES: Record<string, string> = {
  unsupported_media_type: 'The request body must be application/json (UTF-8)',
  payload_too_large: 'The request body is too large',
  bad_request: 'The request is malformed',
  service_unavailable: 'The service is temporarily unavailable'
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

interface ErrorBody {
  error: string
  message: string
  code: string
  errors?: Record<string, string[]>
  details?: ValidationFailed['details']
  request_id?: string
}

/** What Node's HTTP parser refuses before Fastify sees a request: status, code, public message. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request took too long'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'The request headers are too large']
}

/**
 * Fastify's `clientErrorHandler` (passed by buildApp): a request Node's parser refuses (a CR or
 * LF inside a header value, a space in a header name, oversized headers) still gets an
 * ErrorResponse, where Fastify's default writes `{error, message, statusCode}` without a code.
 */
export function clientErrorHandler (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'bad_request', PUBLIC_MESSAGES.bad_request ?? '']
  const body = JSON.stringify({ error: errorTitle(code, status), message, code })
  this.log.debug({ err }, 'client error')
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${errorTitle(code, status)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}

/**
 * One error handler shapes every failure into SPEC §5's ErrorResponse: catalogued errors keep
 * their code and message, Fastify's 4xx are renamed, and anything else is a 500 that shows
 * nothing but the request id (the log line has the rest).
 */
export default fp(async function errorsPlugin (fastify: FastifyInstance) {
  const withDetails = fastify.config.validationErrorDetails

  function send (reply: FastifyReply, status: number, body: ErrorBody, retryAfter?: unknown) {
    const challenge = status === 401 ? wwwAuthenticate(body.code, body.message) : undefined
    if (challenge !== undefined) reply.header('www-authenticate', challenge)
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
    return reply.code(status).send(body)
  }

  function handle (error: FastifyError | ValidationFailed, request: FastifyRequest, reply: FastifyReply) {
    if ('validation' in error && error.validation) {
      const part = error.validationContext ?? 'body'
      const data = part === 'body' ? request.body : part === 'querystring' ? request.query : request.params
      const schema = (request.routeOptions.schema as Record<string, unknown> | undefined)?.[part]
      error = toValidationFailed(error.validation as never, part, data, withDetails, schema)
    }
    if (error instanceof ValidationFailed) {
      request.log.info({ code: error.code }, 'request rejected')
      return send(reply, 422, { error: errorTitle(error.code, 422), message: error.message, code: error.code, errors: error.errors, details: error.details })
    }
    const status = error.statusCode ?? 500
    const code = FASTIFY_CODES[error.code] ?? catalogueCode(error)
    if (status < 500 && code !== undefined) {
      request.log.info({ code }, 'request rejected')
      const message = PUBLIC_MESSAGES[code] ?? error.message
      return send(reply, status, { error: errorTitle(code, status), message, code }, (error as { retryAfter?: unknown }).retryAfter)
    }
    if (status < 500) {
      request.log.info({ code: error.code }, 'request rejected')
      return send(reply, status, { error: errorTitle('bad_request', status), message: PUBLIC_MESSAGES.bad_request ?? '', code: 'bad_request' })
    }
    if (code !== undefined && status !== 500) {
      return send(reply, status, { error: errorTitle(code, status), message: PUBLIC_MESSAGES[code] ?? error.message, code })
    }
    request.log.error({ err: error }, 'request failed')
    return internalError(reply, request)
  }

  function internalError (reply: FastifyReply, request: FastifyRequest) {
    return send(reply, 500, { error: errorTitle('internal_error', 500), message: 'An unexpected error occurred', code: 'internal_error', request_id: request.id })
  }

  // a failure while shaping an error must not fall through to Fastify's fallback body, which shows the message
  fastify.setErrorHandler(function (error: FastifyError | ValidationFailed, request: FastifyRequest, reply: FastifyReply) {
    try {
      return handle(error, request, reply)
    } catch (err) {
      request.log.error({ err, cause: error }, 'the error handler failed')
      return internalError(reply, request)
    }
  })

  // 405 with Allow when the path exists under another method, else 404
  fastify.setNotFoundHandler(function (request: FastifyRequest, reply: FastifyReply) {
    const url = request.url.split('?', 1)[0] ?? '/'
    const allowed = METHODS.filter((method) => fastify.findRoute({ method, url }) !== null)
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      throw new MethodNotAllowed(request.method)
    }
    throw new NotFound('The requested resource was not found')
  })
}, { name: 'errors', dependencies: ['config'] })
