import type { DenialReason } from '../schemas/errors.js'
import type { AuditEventName, AuditOutcome } from '../schemas/audit.js'

/* The vocabulary every service reports in: a leaf that any folder of src/ may import. */

/** Where a request came from, for audit lines (never a token or a password). */
export interface RequestContext {
  ip: string
  /** the User-Agent header, where a session records it (sign-in, refresh) */
  userAgent?: string | undefined
}

/** The command line has no client address; its events say where they came from instead. */
export const CLI_CONTEXT: RequestContext = { ip: 'cli' }

/** The list is a schema constant (schemas/audit.ts): the API validates the same names the trail writes. */
export type AuditEvent = AuditEventName

export interface AuditRecord {
  event: AuditEvent
  /** `success` unless said otherwise */
  outcome?: AuditOutcome
  /** the user who acted: the signed-in caller (absent for an anonymous request and the command line) */
  actorId?: string | undefined
  /** the user the event is about (the target) */
  userId?: string
  sessionId?: string
  email?: string
  detail?: string
}

/** How a service reports a security event; createServices makes each an `audit` event that the trail observes. */
export type AuditSink = (record: AuditRecord, context: RequestContext) => void

/**
 * The limits a 429 can come from. Only these fixed names travel in events and metric labels
 * (never a user, an address or a path parameter), so the number of series stays bounded.
 */
export const LIMITERS = ['login_rate', 'refresh_rate', 'mail_rate', 'login_failures', 'password_failures', 'second_factor_failures', 'email_code_failures', 'other'] as const
export type Limiter = typeof LIMITERS[number]

/** What the services report, for whoever observes them (metrics, the audit trail). */
export interface ServiceEventMap {
  /** an argon2 operation finished: its own time, whichever service called it */
  password: { operation: 'hash' | 'verify', seconds: number }
  /** a request was refused by a limit */
  throttled: { limiter: Limiter }
  /** a request was refused with 403, for this reason */
  denied: { reason: DenialReason }
  /** a security event */
  audit: { record: AuditRecord, context: RequestContext }
  /** the mail sender settled an outbox row: delivered, to be tried again, or given up */
  mail: { outcome: MailOutcome }
}

export const MAIL_OUTCOMES = ['sent', 'retried', 'abandoned'] as const
export type MailOutcome = typeof MAIL_OUTCOMES[number]

export type ServiceEventName = keyof ServiceEventMap
export type ServiceEventListener<K extends ServiceEventName> = (event: ServiceEventMap[K]) => void

/**
 * The services' events, one hub per set of services (so two apps in one process never hear
 * each other). Observers subscribe; nothing wraps a service to learn what it did. With no
 * listener an emit is a loop over an empty array.
 */
export class ServiceEvents {
  private readonly listeners: { [K in ServiceEventName]: Array<ServiceEventListener<K>> } = { password: [], throttled: [], denied: [], audit: [], mail: [] }

  on<K extends ServiceEventName> (name: K, listener: ServiceEventListener<K>): void {
    this.listeners[name].push(listener)
  }

  emit<K extends ServiceEventName> (name: K, event: ServiceEventMap[K]): void {
    for (const listener of this.listeners[name]) listener(event)
  }
}
