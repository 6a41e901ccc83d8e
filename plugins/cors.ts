import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { methodsAt } from './error-handler.js'

/** What a browser sends that makes a request not simple, and what it would need to be told it may. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type']

/**
 * CORS for the origins of CORS_ORIGINS, credentials allowed (registered only when there are some).
 *
 * - A preflight allows every method some route has (collected as the routes register), not the
 *   plugin's default `GET,HEAD,POST`, which refuses every PUT and DELETE.
 * - A preflight is answered only on a path some route has: an OPTIONS to an unknown path, or one
 *   without `Origin` and `Access-Control-Request-Method` (not a preflight), goes on to the not-found
 *   handler, which answers the ErrorResponse 404 (405 with `Allow` on a known path) as without CORS.
 * - The headers a client of this API sends are listed: by default the plugin reflects whatever a
 *   preflight asks for.
 *
 * @see https://github.com/fastify/fastify-cors#options
 */
export default fp(async function corsPlugin (fastify: FastifyInstance) {
  const { corsOrigins } = fastify.config
  const methods = new Set<string>()
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'OPTIONS') methods.add(method)
  })
  let allowed: FastifyCorsOptions = { origin: corsOrigins, credentials: true, allowedHeaders: ALLOWED_HEADERS }
  // the routes register after this plugin: their methods are known once the app is ready
  fastify.addHook('onReady', async () => { allowed = { ...allowed, methods: [...methods].sort() } })
  const refused: FastifyCorsOptions = { origin: false }
  const isPreflight = (request: FastifyRequest): boolean =>
    request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined &&
    methodsAt(fastify, request.url).length > 0

  await fastify.register(fastifyCors, {
    delegator: (request, callback) => {
      callback(null, request.method !== 'OPTIONS' || isPreflight(request) ? allowed : refused)
    }
  })
}, { name: 'cors', fastify: '5.x', dependencies: ['config', 'error-handler'] })
