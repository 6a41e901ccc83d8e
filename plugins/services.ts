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
 * The services of src/, built by createServices and decorated for the routes; the admin is
 * bootstrapped once every plugin is loaded, so its work is observed like any other.
 */
export default fp(async function servicesPlugin (fastify: FastifyInstance, { mailTransport, clock }: { mailTransport?: TransportOptions, clock?: () => number }) {
  const services = await createServices({ config: fastify.config, store: fastify.store, log: fastify.log, counters: fastify.counters, mailTransport, clock })
  fastify.decorate('services', services)
  fastify.addHook('onReady', async () => { await services.bootstrapAdmin() })
  // a mail request answered before its secret and outbox row were written finishes first: before
  // the sender stops (preClose), and any taken meanwhile before the store closes (onClose hooks
  // run in reverse order of registration)
  fastify.addHook('preClose', async () => { await services.recovery.settled() })
  fastify.addHook('onClose', async () => { await services.recovery.settled() })
}, { name: 'services', dependencies: ['config', 'db', 'counters'] })
