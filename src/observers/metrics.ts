import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { AuditEvent } from '../events.js'
import { DENIAL_REASONS } from '../../schemas/errors.js'
import { HASH_ALGORITHMS } from '../crypto/legacy-hashes.js'
import { LIMITERS, MAIL_OUTCOMES, type Limiter, type ServiceEvents } from '../events.js'

/**
 * Users by the algorithm of their password hash, counted in the database when scraped (one
 * grouped scan): an import's progress, and how many legacy hashes the rehash has yet to replace.
 */
function passwordCensus (registry: Registry, census: () => Promise<Record<string, number>>): void {
  registry.registerMetric(new Gauge({
    name: 'gatehouse_users_by_password_hash',
    help: 'Users by the algorithm of their stored password hash (none: no password)',
    labelNames: ['algorithm'],
    registers: [],
    async collect () {
      const counts = await census()
      for (const algorithm of [...HASH_ALGORITHMS, 'none']) this.set({ algorithm }, counts[algorithm] ?? 0)
    }
  }))
}

/**
 * The service's Prometheus metrics, in a registry of their own: every app (and every test)
 * has its own, and nothing lands in prom-client's global registry. They observe the services'
 * events and never wrap a service. The hot path only bumps counters; the revocation gauge is
 * read when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry()
  private readonly logins = new Counter({ name: 'gatehouse_login_attempts_total', help: 'Sign-in attempts by outcome', labelNames: ['outcome'], registers: [this.registry] })
  private readonly refreshes = new Counter({ name: 'gatehouse_refreshes_total', help: 'Refresh tokens rotated', registers: [this.registry] })
  private readonly reuses = new Counter({ name: 'gatehouse_refresh_reuse_detected_total', help: 'Spent refresh tokens presented after the grace interval (session revoked)', registers: [this.registry] })
  private readonly throttles = new Counter({ name: 'gatehouse_throttled_requests_total', help: 'Requests refused with 429, by limiter', labelNames: ['limiter'], registers: [this.registry] })
  private readonly mails = new Counter({ name: 'gatehouse_mail_deliveries_total', help: 'Outbox mails settled by the sender: sent, retried (an attempt failed) or abandoned', labelNames: ['outcome'], registers: [this.registry] })
  private readonly denials = new Counter({ name: 'gatehouse_access_denied_total', help: 'Requests refused with 403, by reason', labelNames: ['reason'], registers: [this.registry] })
  private readonly breached: Counter | undefined
  private readonly hashing = new Histogram({
    name: 'gatehouse_password_hash_duration_seconds',
    help: 'Password hashing (argon2id) and verification (any stored format) time per operation',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry]
  })

  /**
   * `census`: counts users by password hash algorithm (the gauge); `breachedPasswords`: BREACHED_PASSWORDS_FILE
   * is set, so its refusals are counted (absent otherwise)
   */
  constructor (revocations: () => number, { census, breachedPasswords = false }: { census?: () => Promise<Record<string, number>>, breachedPasswords?: boolean } = {}) {
    if (census !== undefined) passwordCensus(this.registry, census)
    if (breachedPasswords) this.breached = new Counter({ name: 'gatehouse_breached_passwords_refused_total', help: 'New passwords refused as known breached ones (BREACHED_PASSWORDS_FILE)', registers: [this.registry] })
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
    for (const outcome of MAIL_OUTCOMES) this.mails.inc({ outcome }, 0)
    for (const reason of DENIAL_REASONS) this.denials.inc({ reason }, 0)
  }

  /** Counts what the services report: argon2 times, refusals by limiter, audit events, mail deliveries. */
  observe (events: ServiceEvents): void {
    events.on('password', ({ operation, seconds }) => { this.hashing.observe({ operation }, seconds) })
    events.on('throttled', ({ limiter }) => { this.throttled(limiter) })
    events.on('denied', ({ reason }) => { this.denials.inc({ reason }) })
    events.on('audit', ({ record }) => { this.audited(record.event) })
    events.on('mail', ({ outcome }) => { this.mails.inc({ outcome }) })
    events.on('breached_password', () => { this.breached?.inc() })
  }

  /** Audit events that are metrics too; the others are only audited. */
  private audited (event: AuditEvent): void {
    if (event === 'login_succeeded') this.logins.inc({ outcome: 'success' })
    else if (event === 'login_failed') this.logins.inc({ outcome: 'failure' })
    else if (event === 'refreshed') this.refreshes.inc()
    else if (event === 'refresh_reuse_detected') this.reuses.inc()
    // a sign-in's challenge is answered with a 403 mfa_required without being an error: counted here, as every 403 is
    else if (event === 'mfa_challenge_issued') this.denials.inc({ reason: 'mfa_required' })
  }

  private throttled (limiter: Limiter): void {
    this.throttles.inc({ limiter })
    if (limiter === 'login_failures') this.logins.inc({ outcome: 'throttled' })
  }

  async scrape (): Promise<{ contentType: string, body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }
}
