import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * With an asymmetric JWT_ALG: checks the stored keys against DATA_ENCRYPTION_KEYS, creates the
 * first key when there is none, loads them for the token codec and runs automatic rotation.
 * After the revocations plugin: key changes made elsewhere arrive through its sync.
 */
export default fp(async function signingKeysPlugin (fastify: FastifyInstance) {
  const { keys } = fastify.services
  await keys.start()
  fastify.addHook('onClose', async () => { keys.close() })
}, { name: 'signing-keys', dependencies: ['services', 'revocations'] })
