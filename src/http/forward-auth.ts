/**
 * Forward authentication's framework-free parts: the first ones run on every proxied request, so
 * nothing allocates; the browser redirect's run only for a refused one.
 */

const COMMA = 0x2c
const SPACE = 0x20

function isSeparator (c: number): boolean {
  return c === COMMA || c === SPACE
}

export type ProxiedMethodHeaders = Record<string, string | string[] | undefined>

/**
 * Compared as sent: anything but exactly GET, HEAD or OPTIONS (`get`, `GET, POST`) is judged
 * state-changing, the CSRF rule's safe side.
 */
export function originalMethod (headers: ProxiedMethodHeaders, own: string): string {
  const method = headers['x-forwarded-method'] ?? headers['x-original-method'] ?? own
  return typeof method === 'string' ? method : 'POST'
}

export function noRoleRequired (wanted: string): boolean {
  for (let i = 0; i < wanted.length; i++) if (!isSeparator(wanted.charCodeAt(i))) return false
  return true
}

export function listedRoles (wanted: string): string[] {
  return wanted.split(/[ ,]+/).filter((role) => role !== '')
}

/** A space counts as a separator too (no role name holds one); searched in place, no split per request. */
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

/** What a 401 of /auth/verify becomes for a browser navigation (docs/proxies.md#sending-browsers-to-the-sign-in-page). */
export type VerifyMode = 'forward_auth' | 'auth_request'
export const VERIFY_MODES: readonly VerifyMode[] = ['forward_auth', 'auth_request']

/**
 * A browser loading a page, as opposed to a script's fetch or an API client: `Sec-Fetch-Mode:
 * navigate`, or, from a browser too old to send Sec-Fetch-*, an Accept naming text/html without
 * the X-Requested-With that script libraries add.
 */
export function isNavigation (headers: ProxiedMethodHeaders): boolean {
  const mode = headers['sec-fetch-mode']
  if (mode !== undefined) return mode === 'navigate'
  const accept = headers.accept
  return typeof accept === 'string' && accept.includes('text/html') && headers['x-requested-with'] === undefined
}

/**
 * The proxied request's own URL, `X-Forwarded-Proto://X-Forwarded-Host X-Forwarded-Uri`; undefined
 * unless each is there exactly once and the URI is a path. Whether the result may be used is the
 * return-URL rule's decision (src/portal/return-url.ts), not this function's.
 */
export function forwardedUrl (headers: ProxiedMethodHeaders): string | undefined {
  const proto = headers['x-forwarded-proto']
  const host = headers['x-forwarded-host']
  const uri = headers['x-forwarded-uri']
  if (typeof proto !== 'string' || typeof host !== 'string' || typeof uri !== 'string') return undefined
  if ((proto !== 'http' && proto !== 'https') || host === '' || !uri.startsWith('/')) return undefined
  return `${proto}://${host}${uri}`
}
