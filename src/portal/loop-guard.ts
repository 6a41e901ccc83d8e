/**
 * The redirect-loop guard (docs/portal.md#redirect-loops): each redirect from the portal to a
 * return URL on another host counts in the `__Host-gh_rd` cookie, `<count>.<first, unix seconds>`;
 * the fourth within 30 s is a loop — the application never received the sign-in, typically
 * because COOKIE_DOMAIN does not cover it. The cookie is the browser's own: forging it can only
 * stop that browser's redirects.
 */
export const LOOP_WINDOW = 30
export const LOOP_LIMIT = 3

export interface LoopCount {
  /** redirects within the window, this one included */
  count: number
  looping: boolean
  /** the cookie to set, and its Max-Age (what is left of the window) */
  cookie: string
  maxAge: number
}

export function countRedirect (cookie: string | undefined, nowMs: number): LoopCount {
  const now = Math.floor(nowMs / 1000)
  const [countText, firstText] = (cookie ?? '').split('.')
  const first = Number(firstText)
  const inWindow = Number.isSafeInteger(first) && first <= now && now - first < LOOP_WINDOW
  const previous = inWindow ? Math.min(Math.max(Number.parseInt(countText ?? '', 10) || 0, 0), LOOP_LIMIT) : 0
  const start = inWindow ? first : now
  const count = previous + 1
  return { count, looping: count > LOOP_LIMIT, cookie: `${count}.${start}`, maxAge: Math.max(LOOP_WINDOW - (now - start), 1) }
}
