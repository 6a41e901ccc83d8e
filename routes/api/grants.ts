import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { ClientIdParams, GrantList } from '../../schemas/oidc-clients.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import type { Claims } from '../../src/tokens/claims.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]

/** /api/auth/grants: the apps the signed-in user authorized, and ending one (docs/oidc.md#the-api). */
const grantRoutes: FastifyPluginAsyncTypebox<{ oidc: OidcServices }> = async (fastify, { oidc }) => {
  const { grants } = oidc

  fastify.get('/', {
    schema: { tags: ['oidc'], summary: 'The apps the caller authorized, with the scopes consented to', security: SECURED, response: { 200: ref(GrantList), ...errorResponses(401) } },
    config: { noStore: true }
  }, async (request) => ({ data: await grants.list((request.claims as Claims).user_id) }))

  fastify.delete('/:client_id', {
    schema: {
      tags: ['oidc'],
      summary: 'End the caller\'s consent to an app and the caller\'s sessions of it',
      security: SECURED,
      params: ClientIdParams,
      response: { 204: { type: 'null', description: 'Ended' }, ...errorResponses(401, 403, 404, 422) }
    }
  }, async (request, reply) => {
    const caller = request.claims as Claims
    await grants.revoke(caller.user_id, request.params.client_id, { ip: request.ip, userAgent: request.headers['user-agent'] })
    return reply.code(204).send()
  })
}

export default grantRoutes
