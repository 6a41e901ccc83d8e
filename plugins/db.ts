import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { connect, type Store } from '../src/db/store.js'

declare module 'fastify' {
  interface FastifyInstance { store: Store }
}

/** Opens the store named by DATABASE_URL, brings its schema up to date, closes it on shutdown. */
export default fp(async function dbPlugin (fastify: FastifyInstance) {
  const store = await connect(fastify.config.databaseUrl, {
    poolMax: fastify.config.databasePoolMax,
    onError: (err) => { fastify.log.error({ err }, 'database connection error') }
  })
  fastify.addHook('onClose', async () => { await store.close() })
  const applied = await store.migrate()
  if (applied.length > 0) fastify.log.info({ migrations: applied }, 'database migrated')
  fastify.decorate('store', store)
}, { name: 'db', dependencies: ['config'] })
