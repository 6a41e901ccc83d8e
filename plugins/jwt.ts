import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Claims } from '../src/tokens.js'

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: Claims
    user: Claims
  }
}

/**
 * @fastify/jwt (fast-jwt) with RFC 8725's pins: HS256 only, issuer required, the claims we rely
 * on required. Verified tokens are cached by the token string itself (no hashing per request)
 * in a bounded LRU whose entries never outlive the token's exp.
 * @see https://github.com/fastify/fastify-jwt
 */
export default fp(async function jwtPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  await fastify.register(fastifyJwt, {
    secret: config.jwtSecret,
    sign: { algorithm: 'HS256' },
    verify: {
      algorithms: ['HS256'],
      allowedIss: config.jwtIssuer,
      requiredClaims: ['exp', 'iat', 'iss', 'jti', 'sub', 'type', 'session_id', 'user_id'],
      cache: config.tokenCacheSize,
      cacheTTL: config.accessTtl * 1000,
      cacheKeyBuilder: (token: string) => token
    },
    // the access token is read by our guard (header first, then cookie), not by jwtVerify
    decoratorName: 'jwtClaims'
  })
}, { name: 'jwt', dependencies: ['config'] })
