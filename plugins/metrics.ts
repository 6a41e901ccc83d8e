import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ServiceMetrics } from '../src/observers/metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Prometheus metrics; null unless METRICS_ENABLED, so a disabled service pays nothing. */
    metrics: ServiceMetrics | null
  }
}

/**
 * Builds the per-app metrics registry (METRICS_ENABLED), which counts what the services report
 * through their events (429s of the route rate limits included: plugins/rate-limit.ts).
 * @see https://github.com/siimon/prom-client
 */
export default fp(async function metricsPlugin (fastify: FastifyInstance) {
  if (fastify.config.metrics === undefined) {
    fastify.decorate('metrics', null)
    return
  }
  // prom-client is loaded only when metrics are on
  const { ServiceMetrics } = await import('../src/observers/metrics.js')
  const { services } = fastify
  const { store } = fastify
  const metrics = new ServiceMetrics(() => services.revocations.size, {
    census: async () => await store.users.countByPasswordHash(),
    breachedPasswords: services.breachedPasswords !== undefined
  })
  metrics.observe(services.events)
  fastify.decorate('metrics', metrics)
}, { name: 'metrics', dependencies: ['config', 'services', 'db'] })
