import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { KidParams, SigningKey, SigningKeyList } from '../../schemas/keys.js'
import { signingKeyRepresentation } from '../../src/http/presenters.js'
import type { Claims } from '../../src/tokens/claims.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]
const SUPERUSER = { access: { superuser: true }, noStore: true } as const

/** /api/keys: the signing keys of access tokens, listed, rotated and revoked by a superuser (docs/keys.md). */
const keyRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { keys } = fastify.services
  const actorOf = (request: { claims: Claims | null }) => request.claims?.user_id

  fastify.get('/', {
    schema: { tags: ['keys'], summary: 'List the signing keys not yet gone, oldest first', security: SECURED, response: { 200: ref(SigningKeyList), ...errorResponses(401, 403) } },
    config: SUPERUSER
  }, async () => ({ data: (await keys.list()).map(signingKeyRepresentation) }))

  fastify.post('/rotate', {
    schema: {
      tags: ['keys'],
      summary: 'Create the next signing key: published now, signing after JWT_KEY_PUBLISH_LEAD',
      security: SECURED,
      response: { 201: ref(SigningKey), ...errorResponses(401, 403, 409) }
    },
    config: SUPERUSER
  }, async (request, reply) => {
    const entry = await keys.rotate({ ip: request.ip }, actorOf(request))
    return reply.code(201).send(signingKeyRepresentation(entry))
  })

  fastify.delete('/:kid', {
    schema: {
      tags: ['keys'],
      summary: 'Revoke a signing key: unpublished and refused at once; a current key is replaced at once',
      security: SECURED,
      params: KidParams,
      response: { 204: { type: 'null', description: 'Revoked (also when it already was)' }, ...errorResponses(401, 403, 404, 409, 422) }
    },
    config: SUPERUSER
  }, async (request, reply) => {
    await keys.revoke(request.params.kid, { ip: request.ip }, actorOf(request))
    return reply.code(204).send()
  })
}

export default keyRoutes
