import fastifyCookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../src/http/credentials.js'
import type { TokenPair } from '../src/sessions/session-service.js'

declare module 'fastify' {
  interface FastifyReply {
    setAuthCookies (pair: TokenPair): FastifyReply
    clearAuthCookies (): FastifyReply
  }
}

/**
 * The browser session (docs/api.md#cookies): HttpOnly so scripts cannot read the tokens, SameSite=Lax,
 * Secure in production, and the refresh cookie scoped to /auth so it travels only to the
 * routes that spend it. The JWTs are signed already, so the cookies themselves are not.
 * @see https://github.com/fastify/fastify-cookie
 */
export default fp(async function cookiesPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  await fastify.register(fastifyCookie)
  const base = { httpOnly: true, sameSite: 'lax', secure: config.production } as const
  const access = { ...base, path: '/', maxAge: config.accessTtl }
  const refresh = { ...base, path: '/auth', maxAge: config.refreshTtl }

  fastify.decorateReply('setAuthCookies', function (this: FastifyReply, pair: TokenPair) {
    return this.setCookie(ACCESS_COOKIE, pair.accessToken, access).setCookie(REFRESH_COOKIE, pair.refreshToken, refresh)
  })
  fastify.decorateReply('clearAuthCookies', function (this: FastifyReply) {
    return this.clearCookie(ACCESS_COOKIE, { ...base, path: '/' }).clearCookie(REFRESH_COOKIE, { ...base, path: '/auth' })
  })
}, { name: 'cookies', dependencies: ['config'] })
