/**
 * The parts of forward authentication (GET /auth/verify) that need no framework: which method
 * the CSRF rule judges, and whether the token's roles meet the `roles` a proxy asks for. Both
 * run on every request of every application behind the proxy, so neither allocates.
 */

const COMMA = 0x2c
const SPACE = 0x20

function isSeparator (c: number): boolean {
  return c === COMMA || c === SPACE
}

/** The headers a proxy names the original method in. */
export type ProxiedMethodHeaders = Record<string, string | string[] | undefined>

/**
 * The method of the request the proxy is asking about: X-Forwarded-Method (nginx as configured
 * in docs/proxies.md, Caddy, Traefik), else X-Original-Method, else the verify request's own.
 * Compared as sent (proxies send upper case): anything but exactly GET, HEAD or OPTIONS, a
 * lower-case `get` or a header sent twice (`GET, POST`) included, is judged state-changing,
 * the CSRF rule's safe side.
 */
export function originalMethod (headers: ProxiedMethodHeaders, own: string): string {
  const method = headers['x-forwarded-method'] ?? headers['x-original-method'] ?? own
  return typeof method === 'string' ? method : 'POST'
}

/** True when `wanted` lists no role at all: empty, or only separators. */
export function noRoleRequired (wanted: string): boolean {
  for (let i = 0; i < wanted.length; i++) if (!isSeparator(wanted.charCodeAt(i))) return false
  return true
}

/** The roles `wanted` lists, split at the same separators: for a refusal, which may allocate. */
export function listedRoles (wanted: string): string[] {
  return wanted.split(/[ ,]+/).filter((role) => role !== '')
}

/**
 * True when `wanted` (`admin,editor`; a space is read as a separator too, since no role name can
 * hold one) names one of `roles`. Searched in place: no split, no Set per request.
 */
export function holdsAnyRole (roles: readonly string[], wanted: string): boolean {
  for (const role of roles) {
    if (role.length === 0) continue
    let at = wanted.indexOf(role)
    while (at !== -1) {
      const end = at + role.length
      if ((at === 0 || isSeparator(wanted.charCodeAt(at - 1))) && (end === wanted.length || isSeparator(wanted.charCodeAt(end)))) return true
      at = wanted.indexOf(role, at + 1)
    }
  }
  return false
}
