import type { AuthMethod, OidcClient } from '../config/oidc-client-rules.js'
import type { RequestContext } from '../events.js'
import { addressGroup } from '../limits/address-group.js'
import { rateLimited, type CounterStore } from '../limits/throttle.js'
import type { ClientSecrets, SecretHash } from './client-secrets.js'
import { OAuthError } from './oauth-error.js'

/** What client authentication reads of a request to a token endpoint: its Authorization header and its form body. */
export interface ClientRequest { authorization?: string | undefined, body: Record<string, unknown> }

/** LOGIN_RATE_LIMIT: failed client authentications count per address with the sign-ins (plugins/rate-limit.ts's counter). */
export interface ClientThrottle { counters: CounterStore, max: number, windowMs: number, ipv6Prefix: number }

interface Registry {
  find (clientId: string): Promise<OidcClient | undefined>
  secretOf (clientId: string): Promise<SecretHash | undefined>
}

interface Presented { clientId: string | undefined, secret: string | undefined, method: AuthMethod }

const BASIC = /^basic +(\S*) *$/i

/** RFC 6749 §2.3.1: the id and the secret are form-urlencoded before they are joined and base64-encoded. */
function formDecoded (value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

function bodyString (body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be sent once`)
  return value
}

/** undefined: a Basic header that does not decode (a failed authentication like a wrong secret) */
function presented (request: ClientRequest): Presented | undefined {
  const bodyId = bodyString(request.body, 'client_id')
  const bodySecret = bodyString(request.body, 'client_secret')
  if (request.authorization === undefined) return { clientId: bodyId, secret: bodySecret, method: bodySecret === undefined ? 'none' : 'client_secret_post' }
  const match = BASIC.exec(request.authorization)
  if (match === null) throw new OAuthError('invalid_request', 'Only HTTP Basic client authentication is accepted in the Authorization header')
  if (bodySecret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method, not two')
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const clientId = colon < 0 ? undefined : formDecoded(decoded.slice(0, colon))
  const secret = colon < 0 ? undefined : formDecoded(decoded.slice(colon + 1))
  if (clientId === undefined || secret === undefined) return undefined
  if (bodyId !== undefined && bodyId !== clientId) throw new OAuthError('invalid_request', 'client_id differs from the one authenticated')
  return { clientId, secret, method: 'client_secret_basic' }
}

/**
 * Authenticates the client of a token, revocation or introspection request as it is registered:
 * its method, then its secret in constant time (an unknown client spends the same HMAC). A
 * failure counts toward the address's LOGIN_RATE_LIMIT, and past it the answer is 429.
 */
export async function authenticateClient (request: ClientRequest, context: RequestContext, { clients, secrets, throttle }: { clients: Registry, secrets: ClientSecrets, throttle: ClientThrottle }): Promise<OidcClient> {
  const key = `rate:${addressGroup(context.ip, throttle.ipv6Prefix)}login`
  const counted = await throttle.counters.peek(key)
  if (counted !== undefined && counted.count >= throttle.max) throw rateLimited((counted.resetAt - Date.now()) / 1000)
  const basic = request.authorization !== undefined
  const credentials = presented(request)
  const client = credentials?.clientId === undefined ? undefined : await clients.find(credentials.clientId)
  let valid = client !== undefined && !client.disabled && client.tokenEndpointAuthMethod === credentials?.method
  if (credentials?.method !== 'none') {
    const stored = valid && client !== undefined ? await clients.secretOf(client.clientId) : undefined
    valid = secrets.matches(credentials?.secret ?? '', stored) && valid
  }
  if (!valid || client === undefined) {
    await throttle.counters.hit(key, throttle.windowMs)
    throw new OAuthError('invalid_client', 'Client authentication failed', { basic })
  }
  return client
}
