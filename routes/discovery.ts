import type { FastifyPluginAsync } from 'fastify'
import { discoveryDocument } from '../src/oidc/discovery.js'

/**
 * The OpenID Connect provider's metadata at both well-known paths (docs/oidc.md#discovery),
 * registered only with ENABLE_OIDC_PROVIDER; cached by relying parties as long as the JWKS.
 * Not in /openapi.json (as /metrics): a relying party's library reads it, not an API client.
 */
const discoveryRoutes: FastifyPluginAsync<{ issuer: string }> = async (fastify, { issuer }) => {
  const body = JSON.stringify(discoveryDocument(issuer, fastify.config.jwtAlg))
  const cacheControl = `public, max-age=${fastify.config.jwksMaxAge}`
  for (const url of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    fastify.get(url, { schema: { hide: true } }, (_request, reply) => {
      reply.header('cache-control', cacheControl).type('application/json; charset=utf-8').send(body)
    })
  }
}

export default discoveryRoutes
