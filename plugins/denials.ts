import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { denialOf } from '../src/errors.js'

/**
 * Every 403 is a security event: an `access_denied` audit event naming its reason and the route,
 * and a `denied` service event that the metrics count by reason. Observed from the onError
 * hook, so neither the guard nor a service needs to know who listens.
 * @see https://fastify.dev/docs/latest/Reference/Hooks/#onerror
 */
export default fp(async function denialsPlugin (fastify: FastifyInstance) {
  const { events } = fastify.services
  fastify.addHook('onError', function (request, _reply, error, done) {
    const denial = denialOf(error)
    if (denial !== undefined) {
      const { reason } = denial
      const claims = request.claims
      events.emit('denied', { reason })
      events.emit('audit', {
        record: {
          event: 'access_denied',
          outcome: 'failure',
          actorId: claims?.user_id,
          ...(claims !== null && { sessionId: claims.session_id }),
          // the route's pattern, never the raw URL: bounded, and no path parameter of the caller's choosing
          detail: `${reason}: ${request.method} ${request.routeOptions.url ?? request.url.split('?', 1)[0] ?? ''}`
        },
        context: { ip: request.ip }
      })
    }
    done()
  })
}, { name: 'denials', dependencies: ['services', 'guard'] })
