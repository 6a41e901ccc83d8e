import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { TransportOptions } from '../src/mail/transport.js'
import { createServices, type Services } from '../src/services.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every service and the hub of their events (metrics and the audit trail subscribe to it). */
    services: Services
  }
}

/**
 * The services of src/, built by createServices and decorated for the routes: the one way a
 * route reaches them (`fastify.services.x`). plugins/lifecycle.ts starts and closes them.
 */
export default fp(async function servicesPlugin (fastify: FastifyInstance, { mailTransport, clock, idpRetryInterval }: { mailTransport?: TransportOptions, clock?: () => number, idpRetryInterval?: number }) {
  const services = await createServices({ config: fastify.config, store: fastify.store, log: fastify.log, counters: fastify.counters, redis: fastify.redis, mailTransport, clock, idpRetryInterval })
  fastify.decorate('services', services)
}, { name: 'services', dependencies: ['config', 'db', 'counters'] })
