import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { startRevocations } from '../src/revocations/start.js'

/**
 * Loads the revocation index the services read, keeps it in step with the other instances
 * and prunes it; all of it stops when the app closes.
 */
export default fp(async function revocationsPlugin (fastify: FastifyInstance) {
  const { config, store, redis, services } = fastify
  const revocations = await startRevocations({ index: services.revocations, store, config, log: fastify.log, redis })
  fastify.addHook('onClose', async () => { await revocations.close() })
}, { name: 'revocations', dependencies: ['config', 'db', 'counters', 'services'] })
