import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { looksLikeKey } from '../src/api-keys/format.js'
import { bearerToken, readAccessCredential } from '../src/http/credentials.js'
import { CsrfRejected, Forbidden, TokenInvalid, TokenMissing } from '../src/errors.js'
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
    /**
     * `authenticate` that also takes an API key as Bearer (docs/api-keys.md): the /api scope's hook.
     * With ENABLE_API_KEYS off it is `authenticate` itself.
     */
    authenticateApi: onRequestHookHandler
    /**
     * The claims of the API key a request presents as `Authorization: Bearer gh_…`, or undefined when
     * it presents none (or keys are off): then the access token is read as ever. Throws the key's error.
     */
    keyClaimsOf (request: FastifyRequest): Claims | Promise<Claims> | undefined
    /** An onRequest hook refusing an API key (403 session_required): the scope of /api/auth, which acts on a sign-in session. */
    refuseKeys: onRequestHookHandler
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

  const verifier = fastify.services.apiKeys?.verifier
  // the position of the token's first character after `Bearer `: a JWT's is `e`, a key's `g`
  const TOKEN_START = 7

  function keyClaimsOf (request: FastifyRequest): Claims | Promise<Claims> | undefined {
    if (verifier === undefined) return undefined
    const header = request.headers.authorization
    if (header === undefined || header.charCodeAt(TOKEN_START) !== 0x67) return undefined
    const token = bearerToken(header)
    return token === undefined || !looksLikeKey(token) ? undefined : verifier.verify(token)
  }

  function admit (request: FastifyRequest, claims: Claims, done: (err?: Error) => void): void {
    request.claims = claims
    const denied = denialFor(claims, request.routeOptions.config.access, request.params)
    done(denied)
  }

  const authenticateWithKeys: onRequestHookHandler = function (request, reply, done) {
    let claims: Claims | Promise<Claims> | undefined
    try {
      claims = keyClaimsOf(request)
    } catch (err) {
      done(err as Error)
      return
    }
    if (claims === undefined) authenticate.call(this, request, reply, done)
    else if (claims instanceof Promise) claims.then((c) => { admit(request, c, done) }, done)
    else admit(request, claims, done)
  }

  const refuseKeys: onRequestHookHandler = function (request, _reply, done) {
    done(request.claims?.kind === 'api_key' ? new Forbidden('session_required') : undefined)
  }

  fastify.decorate('keyClaimsOf', keyClaimsOf)
  fastify.decorate('authenticateApi', verifier === undefined ? authenticate : authenticateWithKeys)
  fastify.decorate('refuseKeys', refuseKeys)
  fastify.decorate('verifiedClaimsOf', verifiedClaimsOf)
  fastify.decorate('assertTrustedOrigin', assertTrustedOrigin)
  fastify.decorate('authenticate', authenticate)
}, { name: 'guard', dependencies: ['config', 'cookies', 'services'] })
