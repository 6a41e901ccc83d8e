import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { OidcServices } from '../../src/oidc/provider.js'
import { OAuthError } from '../../src/oidc/oauth-error.js'
import type { OidcClient } from '../../src/config/oidc-client-rules.js'

/** The form's parameters: each once, each bounded (a JWT refresh token is the longest). */
const MAX_PARAMETER = 4096

export function formOf (request: FastifyRequest): Record<string, string> {
  const body = (request.body ?? {}) as Record<string, unknown>
  const form: Record<string, string> = {}
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `The ${name} parameter must be sent once.`)
    if (value.length > MAX_PARAMETER) throw new OAuthError('invalid_request', `The ${name} parameter is too long.`)
    form[name] = value
  }
  return form
}

export async function clientOf (oidc: OidcServices, request: FastifyRequest, form: Record<string, string>): Promise<OidcClient> {
  const client = await oidc.clients.authenticate({ authorization: request.headers.authorization, body: form }, { ip: request.ip, userAgent: request.headers['user-agent'] })
  if (client.disabled) throw new OAuthError('invalid_client', 'The client is disabled.', { basic: request.headers.authorization !== undefined })
  return client
}

function need (form: Record<string, string>, name: string): string {
  const value = form[name]
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `The ${name} parameter is required.`)
  return value
}

/** §17: client_credentials asks for scopes of the client's, never openid or offline_access; none asked: all of them. */
function machineScopes (client: OidcClient, asked: string | undefined): string[] {
  const allowed = client.scopes.filter((s) => s !== 'openid' && s !== 'offline_access')
  if (asked === undefined) return allowed
  const scopes = [...new Set(asked.split(' ').filter((s) => s !== ''))]
  if (scopes.some((s) => !allowed.includes(s))) throw new OAuthError('invalid_scope', 'The client may not ask for one of these scopes.')
  return scopes
}

/** POST /oauth2/token: authorization_code, refresh_token and client_credentials (docs/oidc.md#tokens-and-claims). */
const tokenRoutes = (oidc: OidcServices): FastifyPluginAsync => async (fastify) => {
  const { flow } = oidc
  const accessTtl = fastify.config.accessTtl

  fastify.post('/token', { schema: { hide: true } }, async (request) => {
    const form = formOf(request)
    const client = await clientOf(oidc, request, form)
    const context = { ip: request.ip, userAgent: request.headers['user-agent'] }
    const grantType = need(form, 'grant_type')
    if (!['authorization_code', 'refresh_token', 'client_credentials'].includes(grantType)) throw new OAuthError('unsupported_grant_type', 'The grant types supported are authorization_code, refresh_token and client_credentials.')
    if (!client.grantTypes.includes(grantType)) throw new OAuthError('unauthorized_client', `The client may not use the grant ${grantType}.`)
    if (grantType === 'authorization_code') {
      return await flow.codes.redeem({ code: need(form, 'code'), redirectUri: form.redirect_uri, codeVerifier: form.code_verifier }, client, context)
    }
    if (grantType === 'refresh_token') return await flow.children.refresh(need(form, 'refresh_token'), client, context)
    if (client.type !== 'confidential') throw new OAuthError('unauthorized_client', 'Only a confidential client may use client_credentials.')
    const ttl = client.accessTokenTtl ?? accessTtl
    const scopes = machineScopes(client, form.scope)
    const { token } = flow.tokens.clientToken({ clientId: client.clientId, roles: client.roles, scopes, accessTtl: ttl, nowSeconds: Math.floor(Date.now() / 1000) })
    return { access_token: token, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') }
  })
}

export default tokenRoutes
