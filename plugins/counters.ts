import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { RedisCounterStore } from '../src/limits/redis-counters.js'
import { MemoryCounterStore, type CounterStore } from '../src/limits/throttle.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The fixed-window counters behind every limit: the failure throttles and the route rate limits. */
    counters: CounterStore
    /** The REDIS_URL connection (counters, and the revocation and key-change broadcasts), when one is configured. */
    redis: Redis | undefined
  }
}

/**
 * One counter backend for every limit: in memory, or in Redis when REDIS_URL is set so the
 * limits hold across instances. The server starts and answers whether or not Redis does;
 * an outage is logged once and the counters fall back to this instance's memory meanwhile.
 */
export default fp(async function countersPlugin (fastify: FastifyInstance) {
  const { redisUrl, redisPrefix } = fastify.config
  if (redisUrl === undefined) {
    fastify.decorate('redis', undefined)
    fastify.decorate('counters', new MemoryCounterStore())
    return
  }
  // imported only when configured, as the database drivers are
  const { createRedis, firstReady } = await import('../src/db/redis.js')
  const redis = createRedis(redisUrl, {
    down: (err) => { fastify.log.warn({ err: err?.message }, 'Redis is unreachable: limits are counted per instance until it returns') },
    up: () => { fastify.log.info('Redis is reachable again: limits are shared') }
  })
  fastify.addHook('onClose', async () => { redis.disconnect() })
  await firstReady(redis)
  fastify.decorate('redis', redis)
  fastify.decorate('counters', new RedisCounterStore(redis, redisPrefix))
}, { name: 'counters', dependencies: ['config'] })
