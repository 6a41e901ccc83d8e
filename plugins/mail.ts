import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Runs this instance's mail sender (src/mail/sender.ts) while the app is up: it starts once the
 * app is ready and stops when it closes, finishing or releasing the deliveries under way. Without
 * a transport (production without SMTP_URL) it never starts.
 * @see https://nodemailer.com/smtp/
 */
export default fp(async function mailPlugin (fastify: FastifyInstance) {
  const { mail } = fastify.services
  fastify.addHook('onReady', async () => { mail.start() })
  fastify.addHook('onClose', async () => { await mail.close() })
}, { name: 'mail', dependencies: ['config', 'db', 'services'] })
