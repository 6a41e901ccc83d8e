import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { CsrfRejected, Forbidden, TokenInvalid, TokenMissing } from '../src/errors.js'
import { isStateChanging, isTrustedOrigin } from '../src/origin.js'
import type { Claims } from '../src/tokens.js'
import { ACCESS_COOKIE } from './cookies.js'

/** What a route declares about who may call it (SPEC §4). */
export interface RouteAccess {
  /** any one of these roles passes */
  roles?: string[]
  /** the route param naming a user id; that user passes for themself */
  self?: string
}

declare module 'fastify' {
  interface FastifyContextConfig { access?: RouteAccess }
  interface FastifyRequest { claims: Claims | null }
  interface FastifyInstance {
    /** The /api boundary: token verification, then the claims check. Added by routes/api. */
    apiGuard: onRequestHookHandler
    /** Verifies the access token (Bearer header first, cookie second) and returns its claims. */
    authenticate (request: FastifyRequest): Claims
    /** Refuses a cookie-authenticated state change from a foreign origin. */
    assertTrustedOrigin (request: FastifyRequest): void
  }
}

const BEARER = /^Bearer +(\S*) *$/i

export function mayAccess (claims: Claims, access: RouteAccess | undefined, params: unknown): boolean {
  if (claims.is_superuser || access === undefined) return true
  if (access.self !== undefined && (params as Record<string, unknown>)[access.self] === claims.user_id) return true
  if (access.roles === undefined) return access.self === undefined
  return access.roles.some((role) => claims.roles.includes(role))
}

export default fp(async function guardPlugin (fastify: FastifyInstance) {
  const { config, sessions } = fastify
  // CORS_ORIGINS normalized the way the check normalizes a request's Origin
  const allowedOrigins = new Set(config.corsOrigins.map((o) => { try { return new URL(o).origin } catch { return o } }))
  fastify.decorateRequest('claims', null)

  function assertTrustedOrigin (request: FastifyRequest): void {
    const { origin, referer } = request.headers
    if (!isTrustedOrigin(origin, referer, `${request.protocol}://${request.host}`, allowedOrigins)) throw new CsrfRejected()
  }

  function authenticate (request: FastifyRequest): Claims {
    const header = request.headers.authorization
    if (header !== undefined && /^bearer/i.test(header)) {
      const token = BEARER.exec(header)?.[1]
      if (!token) throw new TokenInvalid()
      return sessions.verifyAccess(token)
    }
    const cookie = request.cookies[ACCESS_COOKIE]
    if (cookie === undefined) throw new TokenMissing()
    if (isStateChanging(request.method)) assertTrustedOrigin(request)
    return sessions.verifyAccess(cookie)
  }

  // callback style, not async: no promise per request on the hottest path
  const apiGuard: onRequestHookHandler = function (request, _reply, done) {
    try {
      const claims = authenticate(request)
      request.claims = claims
      if (!mayAccess(claims, request.routeOptions.config.access, request.params)) throw new Forbidden()
      done()
    } catch (err) {
      done(err as Error)
    }
  }

  fastify.decorate('authenticate', authenticate)
  fastify.decorate('assertTrustedOrigin', assertTrustedOrigin)
  fastify.decorate('apiGuard', apiGuard)
}, { name: 'guard', dependencies: ['config', 'cookies', 'services'] })
