import type { OidcClient } from '../config/oidc-client-rules.js'
import type { OidcTokens } from './oidc-tokens.js'

/** The parameters of RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2), each bounded. */
export interface LogoutRequest {
  id_token_hint?: string
  client_id?: string
  post_logout_redirect_uri?: string
  state?: string
}

const BOUNDS: Record<keyof LogoutRequest, number> = { id_token_hint: 8192, client_id: 64, post_logout_redirect_uri: 2048, state: 2048 }

/** The known parameters, single and within bounds; anything else is left out, as if not sent. */
export function logoutRequestOf (query: Record<string, unknown>): LogoutRequest {
  const request: LogoutRequest = {}
  for (const name of Object.keys(BOUNDS) as Array<keyof LogoutRequest>) {
    const value = query[name]
    if (typeof value === 'string' && value !== '' && value.length <= BOUNDS[name]) request[name] = value
  }
  return request
}

export interface LogoutPlan {
  /** the portal session the hint names (its sid), when the hint is an ID token gatehouse signed */
  sid: string | undefined
  client: OidcClient | undefined
  /** post_logout_redirect_uri?state=…, when it is exactly one of the client's; else undefined (the signed-out page) */
  target: string | undefined
}

/** What a logout request asks: whose session, and where the browser goes afterwards. */
export async function planLogout (request: LogoutRequest, tokens: OidcTokens, clients: { find (id: string): Promise<OidcClient | undefined> }): Promise<LogoutPlan> {
  const hint = request.id_token_hint === undefined ? undefined : tokens.verifySigned(request.id_token_hint, true)
  const sid = typeof hint?.sid === 'string' ? hint.sid : undefined
  const clientId = typeof hint?.aud === 'string' ? hint.aud : request.client_id
  const client = clientId === undefined ? undefined : await clients.find(clientId)
  const uri = request.post_logout_redirect_uri
  if (client === undefined || client.disabled || uri === undefined || !client.postLogoutRedirectUris.includes(uri)) return { sid, client, target: undefined }
  const url = new URL(uri)
  if (request.state !== undefined) url.searchParams.append('state', request.state)
  return { sid, client, target: url.href }
}
