import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { Passkey, PasskeyList, PasskeyParams, RemovePasskeyRequest, RenamePasskeyRequest } from '../../schemas/passkeys.js'
import type { PasskeyService } from '../../src/passkeys/passkey-service.js'
import { SECURED } from '../auth/two-factor.js'
import { callerOf } from '../../src/http/caller.js'

/** /api/auth/passkeys, inside the guarded /api scope: the caller's own passkeys (docs/passkeys.md). */
const ownPasskeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService }> = async (fastify, { passkeys }) => {
  fastify.get('/', {
    schema: {
      tags: ['passkeys'],
      summary: 'The caller\'s passkeys, newest first',
      security: SECURED,
      response: { 200: ref(PasskeyList), ...errorResponses(401, 403) }
    },
    config: { noStore: true }
  }, async (request) => ({ data: await passkeys.list(callerOf(request).user_id) }))

  fastify.patch('/:id', {
    schema: {
      tags: ['passkeys'],
      summary: 'Rename one of the caller\'s passkeys',
      security: SECURED,
      params: PasskeyParams,
      body: RenamePasskeyRequest,
      response: { 200: ref(Passkey), ...errorResponses(401, 403, 404, 415, 422) }
    },
    config: { noStore: true }
  }, async (request) => await passkeys.rename(callerOf(request).user_id, request.params.id, request.body.name))

  fastify.delete('/:id', {
    schema: {
      tags: ['passkeys'],
      summary: 'Remove one of the caller\'s passkeys (needs a recent sign-in, or the password); no session ends',
      description: 'A user without a password keeps their last passkey: 409 `last_credential`.',
      security: SECURED,
      params: PasskeyParams,
      body: RemovePasskeyRequest,
      response: { 204: { type: 'null', description: 'Removed' }, ...errorResponses(400, 401, 403, 404, 409, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const caller = callerOf(request)
    const context = { ip: request.ip }
    await fastify.services.recentAuth.require(caller, request.body.password, context)
    await passkeys.remove(caller.user_id, request.params.id, { actorId: caller.user_id, admin: false }, context)
    return reply.code(204).send()
  })
}

export default ownPasskeyRoutes
