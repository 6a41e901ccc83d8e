import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Runs the services while the app is up (src/services.ts start() and close()). Registered after
 * the observers, so what start() does (the first signing key, the admin bootstrap) is audited and
 * counted like any other work; started while the app is built, so a refused start (a stored key
 * that DATA_ENCRYPTION_KEYS cannot open) fails buildApp and the revocations are loaded before the
 * server listens. onClose hooks run in reverse order of registration: close() (the recovery work
 * answered requests left running, then the mail sender's last deliveries) is done before the
 * audit trail flushes and before the store and Redis close.
 * @see https://fastify.dev/docs/latest/Reference/Hooks/#onclose
 */
export default fp(async function lifecyclePlugin (fastify: FastifyInstance) {
  const { services } = fastify
  fastify.addHook('onClose', async () => { await services.close() })
  await services.start()
}, { name: 'lifecycle', fastify: '5.x', dependencies: ['db', 'counters', 'services', 'audit'] })
