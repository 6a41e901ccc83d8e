/** The cookies a remembered sign-in sets (plugins/cookies.ts); the access cookie is read here. */
export const ACCESS_COOKIE = 'access_token'
export const REFRESH_COOKIE = 'refresh_token'

const BEARER = /^Bearer +(\S*) *$/i

/** True when the Authorization header names the Bearer scheme, well-formed or not. */
function hasBearerScheme (header: string): boolean {
  return /^bearer/i.test(header)
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), else undefined. */
export function bearerToken (header: string): string | undefined {
  return BEARER.exec(header)?.[1] || undefined
}

/**
 * An access credential as presented. From the header, `token` is undefined when the Bearer
 * scheme carries no well-formed token; from the cookie, the request is subject to the CSRF rule.
 */
export type AccessCredential = { source: 'bearer', token: string | undefined } | { source: 'cookie', token: string }

/** What a request carries, as far as credentials go (a FastifyRequest with @fastify/cookie is one). */
export interface CredentialCarrier {
  headers: { authorization?: string }
  cookies: Record<string, string | undefined>
}

/**
 * The one reader of the access credential: the Authorization header when it uses the Bearer
 * scheme (and then never the cookie, even when the header is malformed), else the access cookie.
 * Undefined when the request presents neither; another scheme (Basic) counts as none.
 */
export function readAccessCredential (request: CredentialCarrier): AccessCredential | undefined {
  const header = request.headers.authorization
  if (header !== undefined && hasBearerScheme(header)) return { source: 'bearer', token: bearerToken(header) }
  const cookie = request.cookies[ACCESS_COOKIE]
  return cookie === undefined ? undefined : { source: 'cookie', token: cookie }
}
