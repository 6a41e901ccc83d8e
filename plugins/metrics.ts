import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { COUNTED, rateLimiterOf, ServiceMetrics } from '../src/metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Prometheus metrics; null unless METRICS_ENABLED, so a disabled service pays nothing. */
    metrics: ServiceMetrics | null
  }
}

/**
 * Builds the per-app metrics registry (METRICS_ENABLED) and counts every 429 by the limiter
 * that refused it. Registered before the services, which it instruments.
 * @see https://github.com/siimon/prom-client
 */
export default fp(async function metricsPlugin (fastify: FastifyInstance) {
  if (fastify.config.metrics === undefined) {
    fastify.decorate('metrics', null)
    return
  }
  // read when scraped: the index is built by the services plugin, after this one
  const metrics = new ServiceMetrics(() => fastify.revocations.size)
  fastify.decorate('metrics', metrics)
  // @fastify/rate-limit refuses in onRequest; the failure throttle's 429s are counted (and marked) where thrown
  fastify.addHook('onError', (request, _reply, error, done) => {
    if (error.statusCode === 429 && !(COUNTED in error)) {
      const limit = request.routeOptions.config.rateLimit
      metrics.throttled(rateLimiterOf(limit ? limit.groupId : undefined))
    }
    done()
  })
}, { name: 'metrics', dependencies: ['config'] })
