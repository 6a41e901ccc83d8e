import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AuditTrail } from '../src/observers/audit-trail.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Security events: a log line each, persisted to `audit_events`. */
    auditTrail: AuditTrail
  }
}

/** The audit trail, fed by the services' `audit` events; pending rows are written before the store closes. */
export default fp(async function auditPlugin (fastify: FastifyInstance) {
  const trail = new AuditTrail(fastify.store, fastify.log)
  fastify.services.events.on('audit', ({ record, context }) => { trail.sink(record, context) })
  fastify.decorate('auditTrail', trail)
  fastify.addHook('onClose', async () => { await trail.flush() })
}, { name: 'audit', dependencies: ['config', 'db', 'services'] })
