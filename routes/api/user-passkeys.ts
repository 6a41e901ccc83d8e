import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { PasskeyList, UserPasskeyParams } from '../../schemas/passkeys.js'
import { adminTarget } from '../../src/http/access.js'
import type { PasskeyService } from '../../src/passkeys/passkey-service.js'
import type { Claims } from '../../src/tokens/claims.js'
import { SECURED } from '../auth/two-factor.js'
import { callerOf } from '../../src/http/caller.js'

const ADMIN = { access: { roles: ['admin'] }, noStore: true }

/** /api/users/:id/passkeys: one user's passkeys, for admins; a superuser's only for a superuser. */
const userPasskeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService }> = async (fastify, { passkeys }) => {
  const ownerOf = async (id: string, caller: Claims) => adminTarget(await fastify.services.users.findById(id), caller).id

  fastify.get('/:id/passkeys', {
    schema: {
      tags: ['passkeys'],
      summary: 'A user\'s passkeys, newest first',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(PasskeyList), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request) => ({ data: await passkeys.list(await ownerOf(request.params.id, callerOf(request))) }))

  fastify.delete('/:id/passkeys/:passkey_id', {
    schema: {
      tags: ['passkeys'],
      summary: 'Remove a user\'s passkey, even their last credential (the user recovers by a password reset)',
      security: SECURED,
      params: UserPasskeyParams,
      response: { 204: { type: 'null', description: 'Removed' }, ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const caller = callerOf(request)
    const userId = await ownerOf(request.params.id, caller)
    await passkeys.remove(userId, request.params.passkey_id, { actorId: caller.user_id, admin: true }, { ip: request.ip })
    return reply.code(204).send()
  })
}

export default userPasskeyRoutes
