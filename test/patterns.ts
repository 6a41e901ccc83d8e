/** The forms the tests expect of generated values, in one place. */

/** A version 4 UUID, as randomUUID() makes the ids of users and sessions (and src/logging/request-ids.ts the form of request ids). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** An RFC 3339 time in UTC as Date#toISOString() writes it: milliseconds and `Z`. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A compact JWS: three base64url parts. */
export const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/

/* The error bodies several suites expect, whole. */
export const BAD_LOGIN = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }
export const EXPIRED = { error: 'Unauthorized', message: 'The token has expired', code: 'token_expired' }
export const FORBIDDEN = { error: 'Forbidden', message: 'You are not allowed to perform this action', code: 'forbidden' }
/** 403s by reason (docs/api.md#why-access-was-denied) */
export const MISSING_ADMIN = { ...FORBIDDEN, reason: 'missing_role', required_roles: ['admin'] }
export const NOT_OWNER = { ...FORBIDDEN, reason: 'not_owner' }
export const SUPERUSER_REQUIRED = { ...FORBIDDEN, reason: 'superuser_required' }
export const CSRF_REJECTED = { error: 'Forbidden', message: 'Cross-origin request rejected', code: 'csrf_rejected', reason: 'csrf_rejected' }
export const REGISTRATION_DISABLED = { error: 'Forbidden', message: 'Registration is disabled', code: 'registration_disabled', reason: 'registration_disabled' }
/** the challenge of a 403 for a missing role or superuser */
export const INSUFFICIENT_SCOPE = 'Bearer realm="gatehouse", error="insufficient_scope"'
export const NOT_FOUND = { error: 'Not Found', message: 'User not found', code: 'not_found' }
export const RATE_LIMITED = { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' }
export const REVOKED = { error: 'Unauthorized', message: 'The token has been revoked', code: 'token_revoked' }

/** helmet's headers on every API answer (OWASP REST Security), success or error alike. */
export const HELMET = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0'
}
