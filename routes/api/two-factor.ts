import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import type { Claims } from '../../src/tokens/claims.js'
import type { TwoFactorService } from '../../src/two-factor/two-factor-service.js'
import { SECURED } from '../auth/two-factor.js'

/** DELETE /api/users/:id/2fa, inside the guarded /api scope: a superuser turns a user's factor off. */
const userTwoFactorRoutes: FastifyPluginAsyncTypebox<{ twoFactor: TwoFactorService }> = async (fastify, { twoFactor }) => {
  fastify.delete('/:id/2fa', {
    schema: {
      tags: ['two-factor'],
      summary: 'Turn a user\'s two-factor sign-in off (superuser): a lost authenticator and lost recovery codes',
      security: SECURED,
      params: IdParams,
      response: { 204: { type: 'null', description: 'Turned off (or was off)' }, ...errorResponses(401, 403, 404, 422) }
    },
    // no role is enough: only a superuser passes
    config: { access: { superuser: true }, noStore: true }
  }, async (request, reply) => {
    await twoFactor.disableFor((request.claims as Claims).user_id, request.params.id, { ip: request.ip })
    return reply.code(204).send()
  })
}

export default userTwoFactorRoutes
