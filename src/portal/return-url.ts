/**
 * Where a browser may be sent back to after signing in or out (docs/portal.md#return-urls). The
 * rule refuses rather than repairs: a value it does not take is replaced by the default, never
 * fixed up, so no clever encoding can turn it into an open redirect.
 */

/** What the rule reads from the settings (src/config/portal.ts). */
export interface ReturnUrlRules {
  /** PUBLIC_URL, without a trailing slash */
  publicUrl: string
  /** PUBLIC_URL's host name */
  publicHost: string
  cookieDomain: string | undefined
  returnHosts: ReadonlySet<string>
  production: boolean
}

export const RETURN_URL_MAX = 2048

/** `localhost`, `*.localhost` and loopback addresses: the only hosts plain http is allowed for, outside production. */
export function isLocalHost (hostname: string): boolean {
  const host = hostname.replace(/\.$/, '')
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]'
}

/**
 * Backslash, C0 controls, space and DEL, looked for before parsing: the URL parser strips tabs
 * and newlines and reads `\` as `/`, which is how `/\evil.example` and `/%09/evil.example` tricks work.
 */
function hasForbiddenCharacter (raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c <= 0x20 || c === 0x7f || c === 0x5c) return true
  }
  return false
}

function parse (raw: string, base: string): URL | undefined {
  try {
    // one leading slash is a path on this service; `//host` (scheme-relative) is refused by the check below
    return raw.startsWith('/') ? new URL(raw, `${base}/`) : new URL(raw)
  } catch {
    return undefined
  }
}

function allowedHost (hostname: string, rules: ReturnUrlRules): boolean {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
  if (host === rules.publicHost || rules.returnHosts.has(host)) return true
  const domain = rules.cookieDomain
  return domain !== undefined && (host === domain || host.endsWith(`.${domain}`))
}

/** The URL to send the browser to, or undefined when `raw` is not an allowed return URL. */
export function checkReturnUrl (raw: string, rules: ReturnUrlRules): string | undefined {
  if (raw.length === 0 || raw.length > RETURN_URL_MAX || hasForbiddenCharacter(raw) || raw.startsWith('//')) return undefined
  const url = parse(raw, rules.publicUrl)
  if (url === undefined || url.username !== '' || url.password !== '') return undefined
  const local = isLocalHost(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local && !rules.production)) return undefined
  return allowedHost(url.hostname, rules) ? url.href : undefined
}
