import type { RequestContext } from '../events.js'
import type { Claims } from '../tokens/claims.js'

/** The claims of a route behind `authenticate`: the hook has refused every request without them. */
export function callerOf (request: { claims: Claims | null }): Claims {
  return request.claims as Claims
}

/** Who a service call is for, as the audit trail and the sessions record it: the address and the browser. */
export function contextOf (request: { ip: string, headers: { 'user-agent'?: string | undefined } }): RequestContext {
  return { ip: request.ip, userAgent: request.headers['user-agent'] }
}
