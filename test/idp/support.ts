import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { AuditEntry } from '../../src/db/audit-events.js'
import { build, claimsOf, setCookies, tempDir, type BuildHooks, type TestContext } from '../helper.js'
import type { Claims } from '../../src/tokens/claims.js'
import { PageClient, PORTAL_ORIGIN, portalValues } from '../routes/portal/support.js'

/*
 * What the suites of sign-in through a provider share (src/idp/, routes/auth/idp.ts): gatehouse
 * built by test/helper.ts (a real SQLite file) with a providers file the test writes, and a
 * browser that goes from gatehouse (app.inject) to a real upstream on loopback and back.
 */

export { PORTAL_ORIGIN }

/** The client secret every upstream double knows each provider by. */
export const CLIENT_SECRET = 'upstream-client-secret-0123456789'

export function redirectUri (id: string): string {
  return `${PORTAL_ORIGIN}/auth/idp/${id}/callback`
}

/** IDP_PROVIDERS_FILE with these entries, each secret in a file of its own (mode 0600, as the start requires). */
export function providersFile (t: TestContext, entries: Array<Record<string, unknown>>): string {
  const dir = tempDir(t)
  const secret = join(dir, 'client-secret')
  writeFileSync(secret, `${CLIENT_SECRET}\n`, { mode: 0o600 })
  const file = join(dir, 'providers.json')
  writeFileSync(file, JSON.stringify(entries.map((entry) => ({ client_id: 'gatehouse', client_secret_file: secret, ...entry }))))
  return file
}

export function idpValues (t: TestContext, entries: Array<Record<string, unknown>>, values: Record<string, unknown> = {}): Record<string, unknown> {
  return portalValues({ ENABLE_IDP_LOGIN: true, IDP_PROVIDERS_FILE: providersFile(t, entries), ...values })
}

export async function idpApp (t: TestContext, entries: Array<Record<string, unknown>>, values: Record<string, unknown> = {}, hooks: BuildHooks = {}): Promise<FastifyInstance> {
  return await build(t, idpValues(t, entries, values), hooks)
}

/** What a page says: its heading, its alert's code and text, its notice, and its links. */
export interface PageText { heading: string | undefined, code: string | undefined, alert: string | undefined, notice: string | undefined, links: Array<{ href: string, text: string }> }

const unescape = (text: string) => text.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', '\'').replaceAll('&lt;', '<').replaceAll('&gt;', '>')

export function pageText (html: string): PageText {
  const alert = /<p class="alert" role="alert" id="form-error" data-code="([^"]+)">([^<]*)<\/p>/.exec(html)
  return {
    heading: unescape(/<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? ''),
    code: alert?.[1],
    alert: alert === null ? undefined : unescape(alert[2] ?? ''),
    notice: ((text) => text === undefined ? undefined : unescape(text))(/<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1]),
    links: [...html.matchAll(/<li><a href="([^"]*)">([^<]*)<\/a><\/li>/g)].map((m) => ({ href: unescape(m[1] ?? ''), text: unescape(m[2] ?? '') }))
  }
}

/** Each Set-Cookie of an answer as `name=value` (a cleared cookie as `name=`), in order. */
export function cookiesSet (res: LightMyRequestResponse): string[] {
  return setCookies(res).map((c) => `${c.name}=${c.attributes['max-age'] === '0' ? '' : '…'}`)
}

/** The claims of the access_token cookie an answer sets (undefined when it sets none). */
export function accessClaims (res: LightMyRequestResponse): Claims | undefined {
  const cookie = setCookies(res).find((c) => c.name === 'access_token' && c.attributes['max-age'] !== '0')
  return cookie === undefined ? undefined : claimsOf(cookie.value)
}

/** The page every refusal shows: its status, code, heading and text, the link back to the sign-in page (coming back to `rd`). */
export function refusal (status: number, code: string, heading: string, alert: string, rd = `${PORTAL_ORIGIN}/portal/account`): { status: number, page: PageText } {
  return { status, page: { heading, code, alert, notice: undefined, links: [{ href: `${PORTAL_ORIGIN}/portal/login?rd=${encodeURIComponent(rd)}`, text: 'Back to sign-in' }] } }
}

/** What a test compares a refused callback with: its status and page (the cookies are asserted beside it). */
export function answerOf (res: LightMyRequestResponse): { status: number, page: PageText } {
  return { status: res.statusCode, page: pageText(res.body) }
}

/**
 * Sets Date.now `ms` ahead of the real clock (0: back to it) for what reads it as it goes (a pending
 * link's expiry, the tokens' times); the real one is back at the end of the test. What was handed
 * Date.now itself when it was built (the sealed cookies' clocks) keeps the real time.
 */
export function shiftDateNow (t: TestContext): (ms: number) => void {
  const real = Date.now
  t.teardown(() => { Date.now = real })
  return (ms) => { Date.now = () => real() + ms }
}

/** The audit rows of `event`, oldest first, once written. */
export async function auditOf (app: FastifyInstance, event: string): Promise<Array<Pick<AuditEntry, 'event' | 'outcome' | 'userId' | 'email' | 'detail'>>> {
  const { entries } = await app.auditTrail.page({ event }, 1, 100)
  return entries.reverse().map(({ event, outcome, userId, email, detail }) => ({ event, outcome, userId, email, detail }))
}

export interface SignIn {
  /** gatehouse's answer to the start */
  start: LightMyRequestResponse
  /** where the provider sent the browser back to */
  callbackUrl: URL
  /** gatehouse's answer to the callback */
  callback: LightMyRequestResponse
}

/**
 * A browser: gatehouse's pages through app.inject (PageClient: the cookie jar, same-origin forms),
 * the provider's through real HTTP with a cookie jar of its own, redirects followed there until the
 * provider sends the browser back to gatehouse.
 */
export class IdpBrowser extends PageClient {
  private readonly upstreamJar = new Map<string, string>()

  /** Follows `location` through the provider; the URL it sends the browser back to (gatehouse's callback). */
  async throughUpstream (location: string): Promise<URL> {
    let url = new URL(location)
    for (let hop = 0; hop < 10; hop++) {
      if (url.origin === PORTAL_ORIGIN) return url
      const cookie = [...this.upstreamJar].filter(([key]) => key.startsWith(`${url.origin} `)).map(([key, value]) => `${key.slice(key.indexOf(' ') + 1)}=${value}`).join('; ')
      const res = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } })
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';')
        const name = pair.slice(0, pair.indexOf('='))
        const value = pair.slice(pair.indexOf('=') + 1)
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.upstreamJar.delete(`${url.origin} ${name}`)
        else this.upstreamJar.set(`${url.origin} ${name}`, value)
      }
      const next = res.headers.get('location')
      await res.arrayBuffer()
      if (next === null) throw new Error(`the provider answered ${res.status} at ${url.href} without sending the browser on`)
      url = new URL(next, url)
    }
    throw new Error('more than 10 redirects at the provider')
  }

  /** Start → provider → callback, as a browser goes; the answers on the way. */
  async signIn (provider: string, query = ''): Promise<SignIn> {
    const start = await this.get(`/auth/idp/${provider}/start${query}`)
    if (start.statusCode !== 302) throw new Error(`the start answered ${start.statusCode}: ${start.body}`)
    const callbackUrl = await this.throughUpstream(String(start.headers.location))
    const callback = await this.get(`${callbackUrl.pathname}${callbackUrl.search}`)
    return { start, callbackUrl, callback }
  }
}
