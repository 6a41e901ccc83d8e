import type { DenialReason } from '../schemas/errors.js'
import type { AuditEventName, AuditOutcome } from '../schemas/audit.js'

/** Never a token or a password. */
export interface RequestContext {
  ip: string
  userAgent?: string | undefined
  /** set by the portal's pages: their audit events say `detail: portal` */
  via?: 'portal'
}

/** The command line has no client address; its events say where they came from instead. */
export const CLI_CONTEXT: RequestContext = { ip: 'cli' }

/** A schema constant (schemas/audit.ts): the API validates the same names the trail writes. */
export type AuditEvent = AuditEventName

export interface AuditRecord {
  event: AuditEvent
  outcome?: AuditOutcome
  actorId?: string | undefined
  userId?: string
  sessionId?: string
  email?: string
  detail?: string
}

export type AuditSink = (record: AuditRecord, context: RequestContext) => void

/** Only fixed names travel in events and metric labels, so the number of series stays bounded. */
export const LIMITERS = ['login_rate', 'refresh_rate', 'mail_rate', 'login_failures', 'password_failures', 'second_factor_failures', 'email_code_failures', 'other'] as const
export type Limiter = typeof LIMITERS[number]

export interface ServiceEventMap {
  /** its own time, whichever service called it */
  password: { operation: 'hash' | 'verify', seconds: number }
  throttled: { limiter: Limiter }
  denied: { reason: DenialReason }
  audit: { record: AuditRecord, context: RequestContext }
  mail: { outcome: MailOutcome }
  /** a password refused as a known breached one (src/breached-passwords/) */
  breached_password: Record<never, never>
}

export const MAIL_OUTCOMES = ['sent', 'retried', 'abandoned'] as const
export type MailOutcome = typeof MAIL_OUTCOMES[number]

export type ServiceEventName = keyof ServiceEventMap
export type ServiceEventListener<K extends ServiceEventName> = (event: ServiceEventMap[K]) => void

/** One hub per set of services, so two apps in one process never hear each other. */
export class ServiceEvents {
  private readonly listeners: { [K in ServiceEventName]: Array<ServiceEventListener<K>> } = { password: [], throttled: [], denied: [], audit: [], mail: [], breached_password: [] }

  on<K extends ServiceEventName> (name: K, listener: ServiceEventListener<K>): void {
    this.listeners[name].push(listener)
  }

  emit<K extends ServiceEventName> (name: K, event: ServiceEventMap[K]): void {
    for (const listener of this.listeners[name]) listener(event)
  }
}
