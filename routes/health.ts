import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/errors.js'
import { ServiceUnavailable } from '../src/errors.js'

const Status = Type.Object({ status: Type.Literal('ok') })

/** Liveness (the process answers) and readiness (the database answers). */
const healthRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/health', {
    schema: { tags: ['health'], summary: 'The process is alive', response: { 200: Status } }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/ready', {
    schema: { tags: ['health'], summary: 'The database answers', response: { 200: Status, ...errorResponses(503) } }
  }, async (request) => {
    try {
      await fastify.store.ping()
    } catch (err) {
      request.log.warn({ err }, 'database not ready')
      throw new ServiceUnavailable()
    }
    return { status: 'ok' as const }
  })
}

export default healthRoutes
