import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The response carries tokens or user data: no cache (a browser's, a proxy's) may keep it. */
    noStore?: boolean
  }
}

/** RFC 6749 §5.1 for tokens, and RFC 9111 §5.2.2.5 for any other response a cache must not keep. */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

// set before the handler runs, so an error answer from the same route carries it too
const noStore: onRequestHookHandler = function (_request, reply, done) {
  reply.headers(NO_STORE)
  done()
}

/**
 * Routes that declare `config: { noStore: true }` get the no-store headers; the hook is added to
 * those routes only (onRoute), so every other route pays nothing.
 */
export default fp(async function noStorePlugin (fastify: FastifyInstance) {
  fastify.addHook('onRoute', (route) => {
    if (route.config?.noStore !== true) return
    route.onRequest = [noStore, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())]
  })
}, { name: 'no-store' })
