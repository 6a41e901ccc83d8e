import { originOf } from '../portal/origins.js'

/**
 * The CSRF rule for cookie-authenticated state changes (OWASP CSRF cheat sheet, "verifying
 * origin with standard headers"): the request's Origin, or failing that its Referer, must be
 * the server itself or one of CORS_ORIGINS. Neither header → refused.
 */
export function isTrustedOrigin (origin: string | undefined, referer: string | undefined, self: string, allowed: ReadonlySet<string>): boolean {
  const header = origin ?? referer
  const source = header === undefined ? undefined : originOf(header)
  if (source === undefined) return false
  return source === originOf(self) || allowed.has(source)
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function isStateChanging (method: string): boolean {
  return !SAFE_METHODS.has(method)
}
