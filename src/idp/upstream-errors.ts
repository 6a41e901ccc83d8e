import { IdpInvalid, IdpUnavailable } from '../errors.js'

/** seconds: the longest gatehouse waits for any answer of a provider (discovery, token, userinfo, GitHub's API) */
export const UPSTREAM_TIMEOUT = 10

/** A callback that failed a check (an `idp_invalid` page); `reason` goes to the log only, never to the page. */
export class CallbackRefused extends IdpInvalid {
  constructor (readonly reason: string) {
    super()
  }
}

/** The provider did not answer, or not in time, or failed on its side (an `idp_unavailable` page); `reason` for the log. */
export class UpstreamUnavailable extends IdpUnavailable {
  constructor (readonly reason: string) {
    super()
  }
}

interface Failure { name?: unknown, message?: unknown, status?: unknown, code?: unknown, cause?: unknown }

/**
 * Whether a failed call never got a proper answer: a timeout, a network error (fetch's "fetch
 * failed"), or a 5xx from the provider. Anything else is an answer that failed a check. The
 * libraries wrap what happened in `cause`, so the chain is read a few levels down.
 */
function unreachable (error: unknown): boolean {
  let current = error as Failure | undefined
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { name, message, status } = current
    if (name === 'TimeoutError' || name === 'AbortError') return true
    if (name === 'TypeError' && message === 'fetch failed') return true
    if (typeof status === 'number' && status >= 500) return true
    current = current.cause as Failure | undefined
  }
  return false
}

/** What a failed upstream call is for the browser: the provider unavailable (503), or its answer refused (400). */
export function upstreamFailure (error: unknown, during: string): CallbackRefused | UpstreamUnavailable {
  const { code, cause } = error as Failure & { cause?: { claim?: unknown, reason?: unknown, attribute?: unknown } }
  // the library's code and the claim or attribute at fault, for the log (the page never shows them)
  const detail = [code, cause?.claim, cause?.attribute, cause?.reason].filter((part) => typeof part === 'string').join(', ')
  const reason = `${during}: ${error instanceof Error ? error.message : String(error)}${detail === '' ? '' : ` (${detail})`}`
  return unreachable(error) ? new UpstreamUnavailable(reason) : new CallbackRefused(reason)
}
