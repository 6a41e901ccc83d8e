import createError from '@fastify/error'
import type { DenialReason } from '../schemas/errors.js'

/**
 * The error catalogue: every `code` a client can switch on, written once (as Fastify's
 * lib/errors.js); plugins/error-handler.ts turns them into ErrorResponse bodies.
 */
export const DETAIL = '%s'

const CATALOGUE = {
  bad_request: { status: 400, message: 'The request is malformed' },
  invalid_json: { status: 400, message: DETAIL, title: 'Invalid JSON' },
  email_taken: { status: 400, message: 'The email has already been taken' },
  invalid_password: { status: 400, message: 'The current password is incorrect' },
  invalid_reset_token: { status: 400, message: 'The reset link is invalid or has expired' },
  invalid_otp: { status: 400, message: 'The code is invalid or has expired' },
  passkey_invalid: { status: 400, message: 'The passkey could not be verified' },
  idp_invalid: { status: 400, message: 'The sign-in through the identity provider could not be verified' },
  idp_error: { status: 400, message: 'The identity provider did not sign you in' },
  invalid_credentials: { status: 401, message: 'Invalid email or password' },
  token_missing: { status: 401, message: 'An access token is required' },
  token_invalid: { status: 401, message: 'The token is invalid' },
  token_expired: { status: 401, message: 'The token has expired' },
  token_revoked: { status: 401, message: 'The token has been revoked' },
  refresh_token_reused: { status: 401, message: 'The refresh token was already used; the session has been revoked' },
  forbidden: { status: 403, message: 'You are not allowed to perform this action' },
  csrf_rejected: { status: 403, message: 'Cross-origin request rejected' },
  registration_disabled: { status: 403, message: 'Registration is disabled' },
  mfa_required: { status: 403, message: 'A second factor is required' },
  reauth_required: { status: 403, message: 'Sign in again to make this change' },
  domain_not_allowed: { status: 403, message: 'Accounts of this email domain may not sign in here' },
  link_refused: { status: 403, message: 'This identity cannot be connected to an existing account this way' },
  signup_disabled: { status: 403, message: 'No account exists for this identity, and none can be created through it' },
  not_found: { status: 404, message: DETAIL },
  method_not_allowed: { status: 405, message: 'Method %s is not allowed on this resource' },
  request_timeout: { status: 408, message: 'The request took too long' },
  totp_already_enabled: { status: 409, message: 'Two-factor sign-in is already enabled' },
  too_many_passkeys: { status: 409, message: 'The account has as many passkeys as it may have' },
  last_credential: { status: 409, message: 'This is the last way to sign in to the account' },
  identity_in_use: { status: 409, message: 'This identity is connected to another account' },
  too_many_api_keys: { status: 409, message: 'The account has as many API keys as it may have' },
  not_service_account: { status: 409, message: 'API keys are created for service accounts only' },
  client_read_only: { status: 409, message: 'The client is defined in OIDC_CLIENTS_FILE and changes only there' },
  signing_keys_disabled: { status: 409, message: 'Signing keys exist only with an asymmetric JWT_ALG (ES256, EdDSA or RS256)' },
  payload_too_large: { status: 413, message: 'The request body is too large' },
  unsupported_media_type: { status: 415, message: 'The request body must be application/json (UTF-8)' },
  validation_failed: { status: 422, message: 'The given data was invalid', title: 'Validation failed' },
  rate_limited: { status: 429, message: 'Too many attempts, try again later' },
  redirect_loop: { status: 508, message: 'The application does not receive your sign-in: check COOKIE_DOMAIN', title: 'Redirect loop' },
  headers_too_large: { status: 431, message: 'The request headers are too large' },
  internal_error: { status: 500, message: 'An unexpected error occurred' },
  not_implemented: { status: 501, message: 'This feature is not implemented' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable' },
  idp_unavailable: { status: 503, message: 'The identity provider is unavailable, try again later' }
} as const satisfies Record<string, CatalogueEntry>

export interface CatalogueEntry {
  readonly status: number
  readonly message: string
  readonly title?: string
}

export type ErrorCode = keyof typeof CATALOGUE

export class CatalogueError extends Error {
  declare readonly code: string
  declare readonly statusCode: number
}

// @fastify/error types its Base as ErrorConstructor (callable too); it only ever reads the prototype
const Base = CatalogueError as unknown as ErrorConstructor

/** Stacks are not captured: these are expected outcomes, and a body never shows one. */
function catalogued (code: ErrorCode) {
  const { status, message } = CATALOGUE[code]
  return createError<string, number, [string?]>(code, message, status, Base, false)
}

export function catalogueEntry (code: ErrorCode): CatalogueEntry {
  return CATALOGUE[code]
}

export function catalogueCode (error: unknown): ErrorCode | undefined {
  return error instanceof CatalogueError ? error.code.toLowerCase() as ErrorCode : undefined
}

export const InvalidJson = catalogued('invalid_json')
export const EmailTaken = catalogued('email_taken')
export const InvalidPassword = catalogued('invalid_password')
export const InvalidResetToken = catalogued('invalid_reset_token')
export const InvalidOtp = catalogued('invalid_otp')
export const InvalidCredentials = catalogued('invalid_credentials')
export const TokenMissing = catalogued('token_missing')
export const TokenInvalid = catalogued('token_invalid')
export const TokenExpired = catalogued('token_expired')
export const TokenRevoked = catalogued('token_revoked')
export const RefreshTokenReused = catalogued('refresh_token_reused')
export class Forbidden extends catalogued('forbidden') {
  readonly reason: DenialReason
  readonly requiredRoles: string[] | undefined
  constructor (reason: 'missing_role' | 'not_owner' | 'superuser_required' | 'session_required', requiredRoles?: string[]) {
    super()
    this.reason = reason
    this.requiredRoles = requiredRoles
  }
}

export const CsrfRejected = catalogued('csrf_rejected')
export const RegistrationDisabled = catalogued('registration_disabled')

export function denialOf (error: unknown): { reason: DenialReason, requiredRoles?: string[] | undefined } | undefined {
  if (error instanceof Forbidden) return { reason: error.reason, requiredRoles: error.requiredRoles }
  const code = catalogueCode(error)
  return code === 'csrf_rejected' || code === 'registration_disabled' || code === 'mfa_required' || code === 'reauth_required' ? { reason: code } : undefined
}
export const NotFound = catalogued('not_found')
export const MethodNotAllowed = catalogued('method_not_allowed')
export const SigningKeysDisabled = catalogued('signing_keys_disabled')
export const TotpAlreadyEnabled = catalogued('totp_already_enabled')
export const MfaRequired = catalogued('mfa_required')
export const ReauthRequired = catalogued('reauth_required')
export const PasskeyInvalid = catalogued('passkey_invalid')
export const TooManyPasskeys = catalogued('too_many_passkeys')
export const LastCredential = catalogued('last_credential')
export const TooManyApiKeys = catalogued('too_many_api_keys')
export const NotServiceAccount = catalogued('not_service_account')
export const ClientReadOnly = catalogued('client_read_only')
export const IdpInvalid = catalogued('idp_invalid')
export const IdpError = catalogued('idp_error')
export const DomainNotAllowed = catalogued('domain_not_allowed')
export const LinkRefused = catalogued('link_refused')
export const SignupDisabled = catalogued('signup_disabled')
export const IdentityInUse = catalogued('identity_in_use')
export const IdpUnavailable = catalogued('idp_unavailable')

export const UnsupportedMediaType = catalogued('unsupported_media_type')
export const RedirectLoop = catalogued('redirect_loop')
export const NotImplemented = catalogued('not_implemented')
export const ServiceUnavailable = catalogued('service_unavailable')

export class RateLimited extends catalogued('rate_limited') {
  readonly retryAfter: number
  constructor (retryAfterSeconds: number) {
    super()
    this.retryAfter = Math.max(1, Math.ceil(retryAfterSeconds))
  }
}

export interface ValidationDetail { field: string, tag: string, value: string, message: string }

export class ValidationFailed extends catalogued('validation_failed') {
  readonly errors: Record<string, string[]>
  readonly details: ValidationDetail[] | undefined
  constructor (errors: Record<string, string[]>, details?: ValidationDetail[]) {
    super()
    this.errors = errors
    this.details = details
  }
}

/** Sorted: the OpenAPI document publishes them as ErrorResponse's enum. */
export function errorCodes (): ErrorCode[] {
  return (Object.keys(CATALOGUE) as ErrorCode[]).sort()
}

/** A setting that stops the start: the message names it, and the server prints only that line. */
export class ConfigError extends Error {}
