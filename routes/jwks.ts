import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../schemas/common.js'
import { JwkSet } from '../schemas/keys.js'

/**
 * The public keys of access tokens, for other services to verify them (docs/keys.md). Cached by
 * verifiers for JWKS_MAX_AGE: a new key is published that long (and more) before it signs.
 */
const jwksRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const cacheControl = `public, max-age=${fastify.config.jwksMaxAge}`
  const { keys } = fastify.services
  fastify.get('/.well-known/jwks.json', {
    schema: {
      tags: ['keys'],
      summary: 'The public keys of access tokens (next, current and previous), as a JWK set',
      response: { 200: ref(JwkSet, { headers: { 'Cache-Control': Type.String({ description: '`public, max-age=<JWKS_MAX_AGE seconds>`' }) } }) }
    }
  }, async (_request, reply) => {
    reply.header('cache-control', cacheControl)
    return { keys: keys.published() }
  })
}

export default jwksRoutes
