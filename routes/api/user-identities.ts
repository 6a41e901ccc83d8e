import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { IdentityList, UserIdentityParams } from '../../schemas/identities.js'
import type { IdentityList as Identities } from '../../src/accounts/identities.js'
import { adminTarget } from '../../src/http/access.js'
import type { Claims } from '../../src/tokens/claims.js'
import { SECURED } from '../auth/two-factor.js'
import { callerOf } from '../../src/http/caller.js'

const ADMIN = { access: { roles: ['admin'] }, noStore: true }

/** /api/users/:id/identities: one user's connected accounts, for admins; a superuser's only for a superuser. */
const userIdentityRoutes: FastifyPluginAsyncTypebox<{ identities: Identities }> = async (fastify, { identities }) => {
  const ownerOf = async (id: string, caller: Claims) => adminTarget(await fastify.services.users.findById(id), caller).id

  fastify.get('/:id/identities', {
    schema: {
      tags: ['identities'],
      summary: 'A user\'s connected accounts at identity providers, oldest first',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(IdentityList), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request) => ({ data: await identities.list(await ownerOf(request.params.id, callerOf(request))) }))

  fastify.delete('/:id/identities/:identity_id', {
    schema: {
      tags: ['identities'],
      summary: 'Disconnect a user\'s connected account, even their last credential (the user recovers by a password reset)',
      security: SECURED,
      params: UserIdentityParams,
      response: { 204: { type: 'null', description: 'Disconnected' }, ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const caller = callerOf(request)
    const userId = await ownerOf(request.params.id, caller)
    await identities.remove(userId, request.params.identity_id, { actorId: caller.user_id, admin: true }, { ip: request.ip })
    return reply.code(204).send()
  })
}

export default userIdentityRoutes
