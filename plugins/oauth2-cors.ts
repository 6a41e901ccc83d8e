import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { NotFound } from '../src/errors.js'

/** The endpoints a browser application calls with fetch; authorize and end-session are navigations. */
const CORS_PATHS = new Set(['token', 'userinfo', 'revoke', 'introspect'])
const CACHE_MS = 1000

/**
 * CORS for public browser clients (a client's `web_origins`, docs/oidc.md#tokens-and-claims) on
 * the endpoints they fetch: the origin is reflected when some enabled client lists it, never
 * credentials (these endpoints read no cookie). Preflights are answered here, with or without an
 * allowed origin (without, the browser refuses: no Access-Control-Allow-Origin).
 */
export default fp(async function oauth2CorsPlugin (fastify: FastifyInstance) {
  const oidc = fastify.services.oidc
  if (oidc === undefined) throw new Error('the oauth2 CORS plugin needs ENABLE_OIDC_PROVIDER')
  let cached = { origins: new Set<string>(), until: 0 }

  async function allowed (origin: string): Promise<boolean> {
    const now = Date.now()
    if (cached.until <= now) {
      const clients = await oidc!.clients.list()
      cached = { origins: new Set(clients.filter((c) => !c.disabled).flatMap((c) => c.webOrigins)), until: now + CACHE_MS }
    }
    return cached.origins.has(origin)
  }

  const endpointOf = (request: FastifyRequest): string => (request.url.split('?', 1)[0] ?? '').split('/').pop() ?? ''

  // callback style, not async: a relying party's server sends no Origin, and pays no promise for it
  fastify.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin
    if (origin === undefined || !CORS_PATHS.has(endpointOf(request))) {
      done()
      return
    }
    reply.header('vary', 'Origin')
    allowed(origin).then((yes) => {
      if (yes) reply.header('access-control-allow-origin', origin)
      done()
    }, done)
  })

  for (const endpoint of CORS_PATHS) {
    fastify.options(`/${endpoint}`, { schema: { hide: true } }, async (request, reply) => {
      if (request.headers['access-control-request-method'] === undefined) throw new NotFound('The requested resource was not found')
      reply.header('access-control-allow-methods', 'GET, POST').header('access-control-allow-headers', 'Authorization, Content-Type').header('access-control-max-age', '600')
      return await reply.code(204).send()
    })
  }
}, { name: 'oauth2-cors', dependencies: ['services'] })
