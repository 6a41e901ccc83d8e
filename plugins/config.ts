import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../src/config/config.js'

declare module 'fastify' {
  interface FastifyInstance { config: Config }
}

/** Exposes the loaded configuration to every plugin. */
export default fp(async function configPlugin (fastify: FastifyInstance, opts: { config: Config }) {
  fastify.decorate('config', opts.config)
}, { name: 'config' })
