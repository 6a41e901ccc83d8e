/** The cookies a remembered sign-in sets (plugins/cookies.ts); the access cookie is read here. */
export const ACCESS_COOKIE = 'access_token'
export const REFRESH_COOKIE = 'refresh_token'

const SCHEME = 'bearer'
const SPACE = 0x20
const EQUALS = 0x3d

/** True when the Authorization header names the Bearer scheme (any case), well-formed or not. */
function hasBearerScheme (header: string): boolean {
  if (header.length < SCHEME.length) return false
  // | 0x20 lower-cases an ASCII letter; SCHEME is all letters, so nothing else can compare equal
  for (let i = 0; i < SCHEME.length; i++) if ((header.charCodeAt(i) | 0x20) !== SCHEME.charCodeAt(i)) return false
  return true
}

/**
 * True for a Bearer header with nothing after the scheme but spaces: what `Bearer $TOKEN` sends when
 * the variable is unset (an HTTP parser drops the trailing spaces, so over a socket it is `Bearer`).
 * It presents no token, so it is answered as a missing one (token_missing), not a malformed one.
 */
export function isBlankBearer (header: string): boolean {
  if (!hasBearerScheme(header)) return false
  for (let i = SCHEME.length; i < header.length; i++) if (header.charCodeAt(i) !== SPACE) return false
  return true
}

/** RFC 6750 b64token characters: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" (then "=" padding). */
const TOKEN_CHARS = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/') TOKEN_CHARS[c.charCodeAt(0)] = 1

// one table lookup per character: a token is read on every guarded request (and every verify)
function isTokenChar (c: number): boolean {
  return c < 128 && TOKEN_CHARS[c] === 1
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1: the scheme in any case,
 * one or more spaces, a b64token; trailing spaces allowed), else undefined. One pass over the
 * header and no regex: the header is client input up to 16 KiB, and a regex with adjacent
 * quantifiers over spaces (`/^Bearer +(\S*) *$/`) backtracks quadratically on `Bearer` + spaces + `a b`.
 */
export function bearerToken (header: string): string | undefined {
  if (!hasBearerScheme(header) || header.charCodeAt(SCHEME.length) !== SPACE) return undefined
  let start = SCHEME.length
  while (header.charCodeAt(start) === SPACE) start++
  let end = start
  while (end < header.length && isTokenChar(header.charCodeAt(end))) end++
  if (end === start) return undefined
  while (header.charCodeAt(end) === EQUALS) end++
  for (let i = end; i < header.length; i++) if (header.charCodeAt(i) !== SPACE) return undefined
  return header.slice(start, end)
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
 * Undefined when the request presents neither, or a blank Bearer header (and then never the
 * cookie either: the header was meant); another scheme (Basic) counts as none.
 * `isKnownToken` names the tokens verified here before: one presented exactly as issued
 * (`Bearer`, one space, the token) is then taken without the character-by-character read, which
 * would only confirm what its verification did (a 600-character scan on every request).
 */
export function readAccessCredential (request: CredentialCarrier, isKnownToken?: (candidate: string) => boolean): AccessCredential | undefined {
  const header = request.headers.authorization
  if (header !== undefined && hasBearerScheme(header)) {
    if (isBlankBearer(header)) return undefined
    if (isKnownToken !== undefined && header.charCodeAt(SCHEME.length) === SPACE) {
      const candidate = header.slice(SCHEME.length + 1)
      if (isKnownToken(candidate)) return { source: 'bearer', token: candidate }
    }
    return { source: 'bearer', token: bearerToken(header) }
  }
  const cookie = request.cookies[ACCESS_COOKIE]
  return cookie === undefined ? undefined : { source: 'cookie', token: cookie }
}
