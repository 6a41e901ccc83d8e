import formbody from '@fastify/formbody'
import type { Static } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { UserinfoResponse } from '../../schemas/oauth2.js'
import { TokenInvalid, TokenMissing, TokenRevoked } from '../../src/errors.js'
import { bearerToken, knownBearer } from '../../src/http/credentials.js'
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

  async function userinfo (request: FastifyRequest): Promise<Static<typeof UserinfoResponse>> {
    const header = request.headers.authorization
    const token = header === undefined ? undefined : knownBearer(header, flow.tokens.knows) ?? bearerToken(header)
    if (token === undefined) throw new TokenMissing()
    const claims = flow.tokens.verifyAccess(token, Date.now())
    const scopes = claims.scope.split(' ')
    if (claims.session_id === undefined || !scopes.includes('openid')) throw new TokenInvalid()
    if (flow.revocations.has(claims.session_id)) throw new TokenRevoked()
    const user = await users.findById(claims.sub)
    if (user === undefined) throw new TokenRevoked()
    return userClaims(user, scopes, { sub: user.id })
  }

  // the response schema serializes it (fast-json-stringify) and is its output filter
  const options = { schema: { hide: true, response: { 200: UserinfoResponse } }, config: { noStore: true } }
  fastify.get('/userinfo', options, userinfo)
  fastify.post('/userinfo', options, userinfo)
}

export default userinfoRoutes
