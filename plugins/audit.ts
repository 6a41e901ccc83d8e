import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AuditTrail } from '../src/audit.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Security events: a log line each, persisted to `audit_events`, counted by the metrics. */
    auditTrail: AuditTrail
  }
}

/** The audit trail the services write to; pending rows are written before the store closes. */
export default fp(async function auditPlugin (fastify: FastifyInstance) {
  const { metrics } = fastify
  const trail = new AuditTrail(fastify.store, fastify.log, metrics === null ? undefined : (event) => { metrics.audited(event) })
  fastify.decorate('auditTrail', trail)
  fastify.addHook('onClose', async () => { await trail.flush() })
}, { name: 'audit', dependencies: ['config', 'db', 'metrics'] })
