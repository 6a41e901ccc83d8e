import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { AuditEvent } from './audit.js'
import type { PasswordHasher } from './passwords.js'
import type { FailureThrottle } from './throttle.js'

/**
 * The limiters a 429 can come from. Labels are only ever these fixed names (never a user, an
 * address or a path parameter), so the number of series stays bounded whatever the traffic.
 */
export const LIMITERS = ['login_rate', 'refresh_rate', 'login_failures', 'password_failures', 'other'] as const
export type Limiter = typeof LIMITERS[number]

/** @fastify/rate-limit groups (plugins/rate-limit.ts) and failure-throttle key prefixes (src/auth.ts). */
const RATE_GROUPS: Record<string, Limiter> = { login: 'login_rate', refresh: 'refresh_rate' }
const THROTTLE_PREFIXES: Record<string, Limiter> = { login: 'login_failures', password: 'password_failures' }

export function rateLimiterOf (groupId: unknown): Limiter {
  return (typeof groupId === 'string' ? RATE_GROUPS[groupId] : undefined) ?? 'other'
}

/** Marks a 429 already counted where it was thrown, so the response hook does not count it again. */
export const COUNTED = Symbol('gatehouse.metrics.counted')

/**
 * The service's Prometheus metrics, in a registry of their own: every app (and every test)
 * has its own, and nothing lands in prom-client's global registry. The hot path only bumps
 * counters; the revocation gauge is read when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry()
  private readonly logins = new Counter({ name: 'gatehouse_login_attempts_total', help: 'Sign-in attempts by outcome', labelNames: ['outcome'], registers: [this.registry] })
  private readonly refreshes = new Counter({ name: 'gatehouse_refreshes_total', help: 'Refresh tokens rotated', registers: [this.registry] })
  private readonly reuses = new Counter({ name: 'gatehouse_refresh_reuse_detected_total', help: 'Spent refresh tokens presented after the grace interval (session revoked)', registers: [this.registry] })
  private readonly throttles = new Counter({ name: 'gatehouse_throttled_requests_total', help: 'Requests refused with 429, by limiter', labelNames: ['limiter'], registers: [this.registry] })
  private readonly hashing = new Histogram({
    name: 'gatehouse_password_hash_duration_seconds',
    help: 'argon2id time per operation',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry]
  })

  constructor (revocations: () => number) {
    new Gauge({
      name: 'gatehouse_revocation_index_size',
      help: 'Revoked sessions held in memory for the access-token check',
      registers: [this.registry],
      collect () { this.set(revocations()) }
    }).set(0)
    collectDefaultMetrics({ register: this.registry })
    // every series exists from the start, so a rate over a fresh process is 0, not absent
    for (const outcome of ['success', 'failure', 'throttled']) this.logins.inc({ outcome }, 0)
    for (const limiter of LIMITERS) this.throttles.inc({ limiter }, 0)
  }

  /** Audit events that are metrics too; the others are only audited. */
  audited (event: AuditEvent): void {
    if (event === 'login_succeeded') this.logins.inc({ outcome: 'success' })
    else if (event === 'login_failed') this.logins.inc({ outcome: 'failure' })
    else if (event === 'refreshed') this.refreshes.inc()
    else if (event === 'refresh_reuse_detected') this.reuses.inc()
  }

  throttled (limiter: Limiter): void {
    this.throttles.inc({ limiter })
    if (limiter === 'login_failures') this.logins.inc({ outcome: 'throttled' })
  }

  /** Times the hasher's own calls, so every caller (login, register, change-password) is measured. */
  instrumentHasher (hasher: PasswordHasher): void {
    const hash = hasher.hash.bind(hasher)
    const verify = hasher.verify.bind(hasher)
    hasher.hash = async (password) => await this.timed('hash', async () => await hash(password))
    hasher.verify = async (passwordHash, password) => await this.timed('verify', async () => await verify(passwordHash, password))
  }

  /** Counts the failure throttle's refusals by the kind of key (login or password), never the key. */
  instrumentThrottle (throttle: FailureThrottle): void {
    const reserve = throttle.reserve.bind(throttle)
    throttle.reserve = async (key, max, windowMs) => {
      try {
        await reserve(key, max, windowMs)
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 429) throw err
        this.throttled(THROTTLE_PREFIXES[key.split(':', 1)[0] ?? ''] ?? 'other')
        throw Object.assign(err as Error, { [COUNTED]: true })
      }
    }
  }

  async scrape (): Promise<{ contentType: string, body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }

  private async timed<T> (operation: 'hash' | 'verify', work: () => Promise<T>): Promise<T> {
    const end = this.hashing.startTimer({ operation })
    try {
      return await work()
    } finally {
      end()
    }
  }
}
