/** Forward authentication's framework-free parts: they run on every proxied request, so nothing allocates. */

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
