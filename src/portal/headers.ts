import { originOf } from './origins.js'

/** The Content-Security-Policy of every portal answer, before form-action is widened for a page. */
const POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'"

/**
 * The headers every answer under /portal/ carries: no framing, no referrer, no cache, and a CSP
 * that lets the page load only its own script and style and post forms only to itself.
 * Browsers apply form-action to the redirects after a POST too, so a form that succeeds onto
 * another origin (a return URL) needs exactly that origin added: `allowingFormTarget`.
 */
export function pageHeaders (portalOrigin: string): { base: Readonly<Record<string, string>>, allowingFormTarget: (url: string) => string } {
  const base = {
    'content-security-policy': `${POLICY}; form-action 'self'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    pragma: 'no-cache'
  }
  return {
    base,
    allowingFormTarget (url: string): string {
      const origin = originOf(url)
      return origin === undefined || origin === portalOrigin ? base['content-security-policy'] : `${POLICY}; form-action 'self' ${origin}`
    }
  }
}
