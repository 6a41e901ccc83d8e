import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { readAccessCredential } from '../src/http/credentials.js'
import { CsrfRejected, TokenInvalid, TokenMissing } from '../src/errors.js'
import { denialFor, type RouteAccess } from '../src/http/access.js'
import { isStateChanging, isTrustedOrigin } from '../src/http/origin.js'
import type { Claims } from '../src/tokens/claims.js'

declare module 'fastify' {
  interface FastifyContextConfig { access?: RouteAccess }
  interface FastifyRequest { claims: Claims | null }
  interface FastifyInstance {
    /**
     * The onRequest hook that authenticates (named as @fastify/jwt's README names it): verifies
     * the access token, then checks the route's declared access. routes/api adds it to the whole
     * /api scope; the few /auth routes that need a signed-in user name it in their own options.
     * @see https://github.com/fastify/fastify-jwt#usage
     */
    authenticate: onRequestHookHandler
    /**
     * The verified claims of the access credential the request presents (Bearer header first,
     * cookie second), or undefined when it presents none. Throws the token's catalogued error.
     * `method` is the one the CSRF rule judges: the request's own, or the proxied request's
     * when GET /auth/verify answers for a reverse proxy.
     */
    verifiedClaimsOf (request: FastifyRequest, method?: string): Claims | undefined
    /** Refuses a cookie-authenticated state change from a foreign origin. */
    assertTrustedOrigin (request: FastifyRequest): void
  }
}

export default fp(async function guardPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  const { sessions } = fastify.services
  // CORS_ORIGINS normalized the way the check normalizes a request's Origin
  const allowedOrigins = new Set(config.corsOrigins.map((o) => { try { return new URL(o).origin } catch { return o } }))
  fastify.decorateRequest('claims', null)

  function assertTrustedOrigin (request: FastifyRequest): void {
    const { origin, referer } = request.headers
    if (!isTrustedOrigin(origin, referer, `${request.protocol}://${request.host}`, allowedOrigins)) throw new CsrfRejected()
  }

  function verifiedClaimsOf (request: FastifyRequest, method: string = request.method): Claims | undefined {
    const credential = readAccessCredential(request, sessions.isKnownToken)
    if (credential === undefined) return undefined
    if (credential.token === undefined) throw new TokenInvalid()
    if (credential.source === 'cookie' && isStateChanging(method)) assertTrustedOrigin(request)
    return sessions.verifyAccess(credential.token)
  }

  // callback style, not async: no promise per request on the hottest path
  const authenticate: onRequestHookHandler = function (request, _reply, done) {
    try {
      const claims = verifiedClaimsOf(request)
      if (claims === undefined) throw new TokenMissing()
      request.claims = claims
      const denied = denialFor(claims, request.routeOptions.config.access, request.params)
      if (denied !== undefined) throw denied
      done()
    } catch (err) {
      done(err as Error)
    }
  }

  fastify.decorate('verifiedClaimsOf', verifiedClaimsOf)
  fastify.decorate('assertTrustedOrigin', assertTrustedOrigin)
  fastify.decorate('authenticate', authenticate)
}, { name: 'guard', dependencies: ['config', 'cookies', 'services'] })
