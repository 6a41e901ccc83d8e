import { STATUS_CODES } from 'node:http'
import createError from '@fastify/error'

/**
 * The error catalogue: every `code` a client can switch on, with its status and public
 * message. Helpers throw these; the one error handler turns them into ErrorResponse bodies.
 * Stacks are not captured: these are expected outcomes, and a body never shows one.
 */
const catalogue = new Set<string>()

function catalogued (code: string, message: string, statusCode: number) {
  catalogue.add(code.toUpperCase())
  return createError<string, number, [string?]>(code, message, statusCode, Error, false)
}

/** The public code of a catalogued error (@fastify/error upper-cases codes), else undefined. */
export function catalogueCode (error: { code?: string }): string | undefined {
  return error.code !== undefined && catalogue.has(error.code) ? error.code.toLowerCase() : undefined
}

export const InvalidJson = catalogued('invalid_json', '%s', 400)
export const InvalidCredentials = catalogued('invalid_credentials', 'Invalid email or password', 401)
export const TokenMissing = catalogued('token_missing', 'An access token is required', 401)
export const TokenInvalid = catalogued('token_invalid', 'The token is invalid', 401)
export const TokenExpired = catalogued('token_expired', 'The token has expired', 401)
export const TokenRevoked = catalogued('token_revoked', 'The token has been revoked', 401)
export const RefreshTokenReused = catalogued('refresh_token_reused', 'The refresh token was already used; the session has been revoked', 401)
export const Forbidden = catalogued('forbidden', 'You are not allowed to perform this action', 403)
export const CsrfRejected = catalogued('csrf_rejected', 'Cross-origin request rejected', 403)
export const RegistrationDisabled = catalogued('registration_disabled', 'Registration is disabled', 403)
export const EmailTaken = catalogued('email_taken', 'The email has already been taken', 400)
export const InvalidPassword = catalogued('invalid_password', 'The current password is incorrect', 400)
export const NotFound = catalogued('not_found', '%s', 404)
export const MethodNotAllowed = catalogued('method_not_allowed', 'Method %s is not allowed on this resource', 405)
export const PayloadTooLarge = catalogued('payload_too_large', 'The request body is too large', 413)
export const UnsupportedMediaType = catalogued('unsupported_media_type', 'The request body must be application/json (UTF-8)', 415)
export const RateLimited = catalogued('rate_limited', 'Too many attempts, try again later', 429)
export const NotImplemented = catalogued('not_implemented', 'This feature is not implemented', 501)
export const ServiceUnavailable = catalogued('service_unavailable', 'The service is temporarily unavailable', 503)

/** 422: the field map (and optional details list) travel on the error itself. */
export class ValidationFailed extends Error {
  readonly code = 'validation_failed'
  readonly statusCode = 422
  constructor (
    readonly errors: Record<string, string[]>,
    readonly details?: ValidationDetail[]
  ) {
    super('The given data was invalid')
  }
}

export interface ValidationDetail { field: string, tag: string, value: string, message: string }

/** The seed fixes a few titles; every other `error` is the status's reason phrase. */
const TITLES: Record<string, string> = {
  invalid_json: 'Invalid JSON',
  validation_failed: 'Validation failed'
}

export function errorTitle (code: string, statusCode: number): string {
  return TITLES[code] ?? STATUS_CODES[statusCode] ?? 'Error'
}

/** RFC 6750 §3: no error attribute when credentials were simply absent. */
export function wwwAuthenticate (code: string, message: string): string | undefined {
  if (code === 'token_missing') return 'Bearer realm="gatehouse"'
  if (code === 'token_invalid' || code === 'token_expired' || code === 'token_revoked' || code === 'refresh_token_reused') {
    return `Bearer realm="gatehouse", error="invalid_token", error_description="${message}"`
  }
  return undefined
}

/**
 * Every `code` a body can carry: the catalogue's, and those the error handler and the client
 * error handler write themselves. The OpenAPI document publishes them as ErrorResponse's enum.
 */
export function errorCodes (): string[] {
  const written = ['bad_request', 'validation_failed', 'request_timeout', 'headers_too_large', 'internal_error']
  return [...new Set([...[...catalogue].map((code) => code.toLowerCase()), ...written])].sort()
}
