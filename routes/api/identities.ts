import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { IdentityList, IdentityParams, RemoveIdentityRequest } from '../../schemas/identities.js'
import type { IdentityList as Identities } from '../../src/accounts/identities.js'
import { SECURED } from '../auth/two-factor.js'
import { callerOf } from '../../src/http/caller.js'

/** /api/auth/identities, inside the guarded /api scope: the caller's connected accounts (docs/identity-providers.md#connected-accounts). */
const ownIdentityRoutes: FastifyPluginAsyncTypebox<{ identities: Identities }> = async (fastify, { identities }) => {
  fastify.get('/', {
    schema: {
      tags: ['identities'],
      summary: 'The caller\'s connected accounts at identity providers, oldest first',
      security: SECURED,
      response: { 200: ref(IdentityList), ...errorResponses(401, 403) }
    },
    config: { noStore: true }
  }, async (request) => ({ data: await identities.list(callerOf(request).user_id) }))

  fastify.delete('/:id', {
    schema: {
      tags: ['identities'],
      summary: 'Disconnect one of the caller\'s connected accounts (needs a recent sign-in, or the password); no session ends',
      description: 'The last way to sign in to the account (no password, no passkey, no other connected account) stays: 409 `last_credential`.',
      security: SECURED,
      params: IdentityParams,
      body: RemoveIdentityRequest,
      response: { 204: { type: 'null', description: 'Disconnected' }, ...errorResponses(400, 401, 403, 404, 409, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const caller = callerOf(request)
    const context = { ip: request.ip }
    await fastify.services.recentAuth.require(caller, request.body.password, context)
    await identities.remove(caller.user_id, request.params.id, { actorId: caller.user_id, admin: false }, context)
    return reply.code(204).send()
  })
}

export default ownIdentityRoutes
