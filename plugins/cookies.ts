import fastifyCookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { ACCESS_COOKIE, PORTAL_REFRESH_COOKIE, REFRESH_COOKIE } from '../src/http/credentials.js'
import type { TokenPair } from '../src/sessions/session-service.js'

declare module 'fastify' {
  interface FastifyReply {
    setAuthCookies (pair: TokenPair): FastifyReply
    clearAuthCookies (): FastifyReply
    /** The portal's session (docs/portal.md#cookies): the access cookie, and the refresh token on the portal's host only. */
    setPortalSession (pair: TokenPair): FastifyReply
    /** Clears the portal's session, the access cookie with and without COOKIE_DOMAIN. */
    clearPortalSession (): FastifyReply
  }
}

/**
 * The browser session (docs/api.md#cookies): HttpOnly so scripts cannot read the tokens, SameSite=Lax,
 * Secure in production, and the refresh cookie scoped to /auth so it travels only to the
 * routes that spend it. With COOKIE_DOMAIN the access cookie reaches the apps on its subdomains.
 * The JWTs are signed already, so the cookies themselves are not.
 * @see https://github.com/fastify/fastify-cookie
 */
export default fp(async function cookiesPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  await fastify.register(fastifyCookie)
  const base = { httpOnly: true, sameSite: 'lax', secure: config.production } as const
  const domain = config.cookieDomain === undefined ? {} : { domain: config.cookieDomain }
  const access = { ...base, ...domain, path: '/', maxAge: config.accessTtl }
  const refresh = { ...base, path: '/auth', maxAge: config.refreshTtl }
  // the __Host- prefix: Secure, Path=/ and no Domain, or the browser refuses the cookie
  const portalRefresh = { ...base, secure: true, path: '/', maxAge: config.refreshTtl }

  function clearAccess (reply: FastifyReply): FastifyReply {
    reply.clearCookie(ACCESS_COOKIE, { ...base, ...domain, path: '/' })
    return config.cookieDomain === undefined ? reply : reply.clearCookie(ACCESS_COOKIE, { ...base, path: '/' })
  }

  fastify.decorateReply('setAuthCookies', function (this: FastifyReply, pair: TokenPair) {
    return this.setCookie(ACCESS_COOKIE, pair.accessToken, access).setCookie(REFRESH_COOKIE, pair.refreshToken, refresh)
  })
  fastify.decorateReply('clearAuthCookies', function (this: FastifyReply) {
    return clearAccess(this).clearCookie(REFRESH_COOKIE, { ...base, path: '/auth' })
  })
  fastify.decorateReply('setPortalSession', function (this: FastifyReply, pair: TokenPair) {
    return this.setCookie(ACCESS_COOKIE, pair.accessToken, access).setCookie(PORTAL_REFRESH_COOKIE, pair.refreshToken, portalRefresh)
  })
  fastify.decorateReply('clearPortalSession', function (this: FastifyReply) {
    return clearAccess(this).clearCookie(PORTAL_REFRESH_COOKIE, { ...portalRefresh, maxAge: undefined })
  })
}, { name: 'cookies', dependencies: ['config'] })
