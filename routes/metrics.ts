import { createHash, timingSafeEqual } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/errors.js'
import { bearerToken, isBlankBearer } from '../src/http/credentials.js'
import { TokenInvalid, TokenMissing } from '../src/errors.js'

/** Digests have one length, so the comparison takes the same time whatever was presented. */
const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * GET /metrics in Prometheus' text format, registered only when METRICS_ENABLED. A scraper
 * presents METRICS_TOKEN as a Bearer token (Prometheus: `authorization.credentials_file`);
 * it is not a user's JWT, and the route is left out of the OpenAPI document, which describes
 * the client API.
 */
const metricsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, metrics } = fastify
  if (config.metrics === undefined || metrics === null) return
  const expected = digest(config.metrics.token)

  fastify.get('/metrics', {
    schema: { hide: true, response: { 200: Type.String(), ...errorResponses(401) } },
    onRequest: (request, _reply, done) => {
      const header = request.headers.authorization
      if (header === undefined || isBlankBearer(header)) return done(new TokenMissing())
      const token = bearerToken(header)
      done(token !== undefined && timingSafeEqual(digest(token), expected) ? undefined : new TokenInvalid())
    }
  }, async (_request, reply) => {
    const { contentType, body } = await metrics.scrape()
    return reply.type(contentType).send(body)
  })
}

export default metricsRoutes
