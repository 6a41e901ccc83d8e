import { randomFillSync, timingSafeEqual } from 'node:crypto'
import { originOf } from './origins.js'

const TOKEN_BYTES = 32
// filled 128 tokens at a time (as uuid's pool): one call into the CSPRNG instead of one per first visit; each byte is used once
const pool = Buffer.alloc(TOKEN_BYTES * 128)
let next = pool.length

/** The form token: 32 random bytes, also held in the `__Host-gh_csrf` cookie (double submit). */
export function newCsrfToken (): string {
  if (next === pool.length) {
    randomFillSync(pool)
    next = 0
  }
  const token = pool.toString('base64url', next, next + TOKEN_BYTES)
  next += TOKEN_BYTES
  return token
}

/** The form's `csrf` field equals the cookie, compared in constant time. */
export function csrfMatches (field: unknown, cookie: string | undefined): boolean {
  if (typeof field !== 'string' || cookie === undefined || field.length !== cookie.length || cookie.length === 0) return false
  return timingSafeEqual(Buffer.from(field), Buffer.from(cookie))
}

export interface FormOriginHeaders {
  origin?: string | undefined
  referer?: string | undefined
  'sec-fetch-site'?: string | string[] | undefined
}

/**
 * The Origin rule read for pages: the portal's own Origin (or, without one, Referer) passes, and
 * so do `Origin: null` or no Origin with `Sec-Fetch-Site: same-origin` — what a browser sends for
 * a same-origin form under `Referrer-Policy: no-referrer`. Anything else is refused, including a
 * POST that carries none of the three.
 */
export function isSameOriginForm (headers: FormOriginHeaders, portalOrigin: string): boolean {
  const { origin, referer } = headers
  const sameSite = headers['sec-fetch-site'] === 'same-origin'
  if (origin !== undefined) return origin === 'null' ? sameSite : originOf(origin) === portalOrigin
  if (referer !== undefined) return originOf(referer) === portalOrigin
  return sameSite
}
