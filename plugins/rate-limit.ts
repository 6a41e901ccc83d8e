import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { addressGroup } from '../src/limits/address-group.js'
import type { Limiter } from '../src/events.js'
import { rateLimited, type CounterStore } from '../src/limits/throttle.js'

type IncrCallback = (err: Error | null, result?: { current: number, ttl: number }) => void

/**
 * A @fastify/rate-limit store over our counters. Its own memory store keeps one map per route,
 * so a `groupId` would not span routes; this one does, and is shared (Redis) when the counters are.
 */
function counterStore (counters: CounterStore) {
  return class CounterRateLimitStore {
    // the plugin passes the route's window as a third argument (its typings omit it)
    incr (key: string, callback: IncrCallback, timeWindow = 60_000): void {
      counters.hit(`rate:${key}`, timeWindow).then(
        ({ count, resetAt }) => { callback(null, { current: count, ttl: Math.max(0, resetAt - Date.now()) }) },
        (err: Error) => { callback(err) }
      )
    }

    child (): CounterRateLimitStore {
      return this
    }
  }
}

export interface RouteRateLimit { max: number, timeWindow: number, groupId: string }

/** The limiter each group is reported as when it refuses a request. */
const LIMITER_OF_GROUP: Record<string, Limiter> = { login: 'login_rate', refresh: 'refresh_rate', mail: 'mail_rate' }

function limiterOf (request: FastifyRequest): Limiter {
  const limit = request.routeOptions.config.rateLimit
  return (limit ? LIMITER_OF_GROUP[limit.groupId ?? ''] : undefined) ?? 'other'
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Per-client-address limits for the routes that spend argon2 or refresh tokens. */
    rateLimits: { login: RouteRateLimit, refresh: RouteRateLimit, mail: RouteRateLimit }
  }
}

/**
 * @fastify/rate-limit, per route (nothing global): login, register and change-password share
 * LOGIN_RATE_LIMIT per client address (one group, so /auth/login and /api/auth/login count
 * together); refresh has its own; forgot-password and send-otp share MAIL_RATE_LIMIT. An IPv6 client is counted by its IPV6_SUBNET_PREFIX subnet.
 * IETF draft `RateLimit-*` headers; a 429 is our ErrorResponse.
 * Each refusal is reported, through the plugin's own `onExceeded`, as a `throttled` event.
 * @see https://github.com/fastify/fastify-rate-limit
 */
export default fp(async function rateLimitPlugin (fastify: FastifyInstance) {
  const { config, services } = fastify
  await fastify.register(fastifyRateLimit, {
    global: false,
    enableDraftSpec: true,
    store: counterStore(fastify.counters),
    keyGenerator: (request) => addressGroup(request.ip, config.ipv6SubnetPrefix),
    onExceeded: (request) => { services.events.emit('throttled', { limiter: limiterOf(request) }) },
    errorResponseBuilder: (_request, context) => rateLimited(context.ttl / 1000)
  })
  fastify.decorate('rateLimits', {
    login: { max: config.loginRateLimit.max, timeWindow: config.loginRateLimit.windowSeconds * 1000, groupId: 'login' },
    refresh: { max: config.refreshRateLimit.max, timeWindow: config.refreshRateLimit.windowSeconds * 1000, groupId: 'refresh' },
    mail: { max: config.mailRateLimit.max, timeWindow: config.mailRateLimit.windowSeconds * 1000, groupId: 'mail' }
  })
}, { name: 'rate-limit', dependencies: ['config', 'counters', 'services'] })
