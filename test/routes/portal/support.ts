import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build, setCookies, type TestContext } from '../../helper.js'

/** The portal as the tests run it: on a `*.localhost` name, where http is allowed outside production. */
export const PORTAL_ORIGIN = 'http://auth.gh.localhost'

export function portalValues (values: Record<string, unknown> = {}): Record<string, unknown> {
  return { ENABLE_PORTAL: true, PUBLIC_URL: PORTAL_ORIGIN, ...values }
}

export async function portalApp (t: TestContext, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return await build(t, portalValues(values))
}

/** The headers every answer under /portal/ carries (docs/portal.md#headers). */
export const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store'
}

/** The value of a form's hidden or filled field `name` in a page. */
export function fieldValue (html: string, name: string): string | undefined {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0]
  const value = input === undefined ? undefined : /value="([^"]*)"/.exec(input)?.[1]
  return value?.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', '\'').replaceAll('&lt;', '<').replaceAll('&gt;', '>')
}

/** The `data-code` of a page's alert (the catalogue code its status goes with), if it shows one. */
export function alertCode (html: string): string | undefined {
  return /class="alert"[^>]*data-code="([^"]+)"/.exec(html)?.[1]
}

function sent (headers: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined))
}

/**
 * A browser over `app.inject`: a cookie jar (by name; Max-Age=0 deletes), and form posts that
 * carry the CSRF token of the jar and the headers a browser sends for a same-origin form.
 * Redirects are not followed: each test asserts the 303 it expects.
 */
export class PageClient {
  readonly jar = new Map<string, string>()
  constructor (private readonly app: FastifyInstance, private readonly origin = PORTAL_ORIGIN) {}

  private remember (response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of setCookies(response)) {
      if (cookie.attributes['max-age'] === '0' || cookie.value === '') this.jar.delete(cookie.name)
      else this.jar.set(cookie.name, cookie.value)
    }
    return response
  }

  cookieHeader (): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  async get (url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.remember(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader(), 'sec-fetch-mode': 'navigate', ...headers } }))
  }

  /** POSTs `fields` (plus `csrf` from the jar unless given) as a same-origin form; a header given as undefined is not sent. */
  async post (url: string, fields: Record<string, string>, headers: Record<string, string | undefined> = {}): Promise<LightMyRequestResponse> {
    if (!this.jar.has('__Host-gh_csrf')) await this.get('/portal/login')
    const payload = new URLSearchParams({ csrf: this.jar.get('__Host-gh_csrf') ?? '', ...fields }).toString()
    return this.remember(await this.app.inject({
      method: 'POST',
      url,
      payload,
      headers: sent({ 'content-type': 'application/x-www-form-urlencoded', origin: this.origin, 'sec-fetch-site': 'same-origin', cookie: this.cookieHeader(), ...headers })
    }))
  }
}
