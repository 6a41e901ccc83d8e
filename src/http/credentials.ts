/** The cookies a remembered sign-in sets (plugins/cookies.ts); the access cookie is read here. */
export const ACCESS_COOKIE = 'access_token'
export const REFRESH_COOKIE = 'refresh_token'
/** The portal's refresh token: host-only and Secure by its prefix, so it never leaves the portal's host. */
export const PORTAL_REFRESH_COOKIE = '__Host-refresh_token'

const SCHEME = 'bearer'
const SPACE = 0x20
const EQUALS = 0x3d

function hasBearerScheme (header: string): boolean {
  if (header.length < SCHEME.length) return false
  // | 0x20 lower-cases an ASCII letter; SCHEME is all letters
  for (let i = 0; i < SCHEME.length; i++) if ((header.charCodeAt(i) | 0x20) !== SCHEME.charCodeAt(i)) return false
  return true
}

/** `Bearer $TOKEN` with the variable unset presents no token: token_missing, not malformed. */
export function isBlankBearer (header: string): boolean {
  if (!hasBearerScheme(header)) return false
  for (let i = SCHEME.length; i < header.length; i++) if (header.charCodeAt(i) !== SPACE) return false
  return true
}

const TOKEN_CHARS = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/') TOKEN_CHARS[c.charCodeAt(0)] = 1

function isTokenChar (c: number): boolean {
  return c < 128 && TOKEN_CHARS[c] === 1
}

/**
 * RFC 6750 §2.1, one pass and no regex: the header is client input, and a regex with adjacent
 * quantifiers over spaces backtracks quadratically on `Bearer` + spaces + `a b`.
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
 * The token of a `Bearer` header that presents, exactly as issued, one verified here before
 * (`isKnownToken`): found without the character-by-character read of bearerToken, which such a
 * token has already passed. Undefined otherwise: the caller reads the header with bearerToken.
 */
export function knownBearer (header: string, isKnownToken: (candidate: string) => boolean): string | undefined {
  if (!hasBearerScheme(header) || header.charCodeAt(SCHEME.length) !== SPACE) return undefined
  const candidate = header.slice(SCHEME.length + 1)
  return isKnownToken(candidate) ? candidate : undefined
}

export type AccessCredential = { source: 'bearer', token: string | undefined } | { source: 'cookie', token: string }

export interface CredentialCarrier {
  headers: { authorization?: string }
  cookies: Record<string, string | undefined>
}

/**
 * A Bearer header wins over the cookie even when malformed (another scheme counts as none). A token
 * verified here before, presented exactly as issued, skips the character-by-character read.
 */
export function readAccessCredential (request: CredentialCarrier, isKnownToken?: (candidate: string) => boolean): AccessCredential | undefined {
  const header = request.headers.authorization
  if (header !== undefined && hasBearerScheme(header)) {
    if (isBlankBearer(header)) return undefined
    return { source: 'bearer', token: (isKnownToken !== undefined ? knownBearer(header, isKnownToken) : undefined) ?? bearerToken(header) }
  }
  const cookie = request.cookies[ACCESS_COOKIE]
  return cookie === undefined ? undefined : { source: 'cookie', token: cookie }
}
