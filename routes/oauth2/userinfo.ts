import formbody from '@fastify/formbody'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { TokenInvalid, TokenMissing, TokenRevoked } from '../../src/errors.js'
import { bearerToken } from '../../src/http/credentials.js'
import { userClaims } from '../../src/oidc/oidc-tokens.js'
import type { OidcServices } from '../../src/oidc/provider.js'

/**
 * GET and POST /oauth2/userinfo (OIDC Core §5.3): an access token issued to a client with the
 * scope openid, from the Authorization header; the claims of the granted scopes, read fresh. Its
 * failures keep §5's ErrorResponse with RFC 6750's WWW-Authenticate (the one error handler).
 */
const userinfoRoutes = (oidc: OidcServices): FastifyPluginAsync => async (fastify) => {
  const { flow } = oidc
  const users = fastify.store.users

  fastify.removeAllContentTypeParsers()
  await fastify.register(formbody, { bodyLimit: fastify.config.bodyLimit })

  async function userinfo (request: FastifyRequest): Promise<Record<string, unknown>> {
    const header = request.headers.authorization
    const token = header === undefined ? undefined : bearerToken(header)
    if (token === undefined) throw new TokenMissing()
    const claims = flow.tokens.verifyAccess(token, Date.now())
    if (claims.session_id === undefined || !claims.scope.split(' ').includes('openid')) throw new TokenInvalid()
    if (flow.revocations.has(claims.session_id)) throw new TokenRevoked()
    const user = await users.findById(claims.sub)
    if (user === undefined) throw new TokenRevoked()
    return { sub: user.id, ...userClaims(user, claims.scope.split(' ')) }
  }

  const options = { schema: { hide: true }, config: { noStore: true } }
  fastify.get('/userinfo', options, userinfo)
  fastify.post('/userinfo', options, userinfo)
}

export default userinfoRoutes
