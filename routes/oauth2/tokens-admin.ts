import type { FastifyPluginAsync } from 'fastify'
import type { OidcServices } from '../../src/oidc/provider.js'
import { OAuthError } from '../../src/oidc/oauth-error.js'
import { clientOf, formOf } from './token.js'

function tokenOf (form: Record<string, string>): string {
  const token = form.token
  if (token === undefined || token === '') throw new OAuthError('invalid_request', 'The token parameter is required.')
  return token
}

/** POST /oauth2/revoke (RFC 7009) and /oauth2/introspect (RFC 7662). */
const tokenAdminRoutes = (oidc: OidcServices): FastifyPluginAsync => async (fastify) => {
  const { lookup } = oidc.flow

  // 200 whatever the token: an unknown one, or another client's (left untouched), tells the caller nothing
  fastify.post('/revoke', { schema: { hide: true } }, async (request, reply) => {
    const form = formOf(request)
    const client = await clientOf(oidc, request, form)
    await lookup.revoke(tokenOf(form), client, { ip: request.ip, userAgent: request.headers['user-agent'] })
    return await reply.code(200).send()
  })

  // any token gatehouse issued, whichever client it was issued to: a resource server introspects its callers' tokens
  fastify.post('/introspect', { schema: { hide: true } }, async (request) => {
    const form = formOf(request)
    const client = await clientOf(oidc, request, form)
    if (client.type !== 'confidential') throw new OAuthError('invalid_client', 'Only a confidential client may introspect tokens.')
    return await lookup.introspect(tokenOf(form))
  })
}

export default tokenAdminRoutes
