import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ChangePasswordRequest } from '../../schemas/auth.js'
import { Message, ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import type { Claims } from '../../src/tokens/claims.js'

/** /api/auth: account actions of the signed-in user (login itself is public, in routes/auth/login.ts). */
const apiAuthRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/change-password', {
    schema: {
      tags: ['auth'],
      summary: 'Change the password; every other session of the user is revoked',
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      body: ChangePasswordRequest,
      response: { 200: ref(Message), ...errorResponses(400, 401, 403, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login }
  }, async (request) => {
    const { current_password: current, new_password: next } = request.body
    await fastify.services.auth.changePassword(request.claims as Claims, current, next, { ip: request.ip })
    return { message: 'Password changed' }
  })
}

export default apiAuthRoutes
