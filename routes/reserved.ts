import type { FastifyPluginAsync } from 'fastify'
import { errorResponses } from '../schemas/errors.js'
import { NotImplemented } from '../src/errors.js'

const RESERVED = ['forgot-password', 'reset-password', 'send-otp', 'verify-otp', 'enable-2fa', 'verify-2fa']

/** Paths reserved for features to come: every method answers 501, before any body is read. */
const reservedRoutes: FastifyPluginAsync = async (fastify) => {
  for (const name of RESERVED) {
    fastify.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: `/auth/${name}`,
      schema: { tags: ['reserved'], summary: 'Reserved: not implemented', response: errorResponses(501) },
      onRequest: (_request, _reply, done) => { done(new NotImplemented()) },
      handler: async () => { throw new NotImplemented() }
    })
  }
}

export default reservedRoutes
