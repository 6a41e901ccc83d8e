import { auditEventId, type AuditEntry, type AuditFilter } from '../db/audit-events.js'
import type { Store } from '../db/store.js'
import type { AuditSink } from '../events.js'

export interface AuditLogger {
  info (fields: object, message: string): void
  error (fields: object, message: string): void
}

/** SQLite binds at most 32766 parameters per statement; 10 per row leaves room. */
const BATCH_LIMIT = 500
const PENDING_LIMIT = 50_000
/**
 * Sign-in methods whose detail outranks the portal's: a passkey sign-in says `passkey`, and one
 * through an identity provider `idp:<id>` (its second step included), wherever it came from.
 */
const outranksPortal = (detail: string): boolean => detail === 'passkey' || detail.startsWith('idp:')

/**
 * Rows are written in one insert per turn, after the answer, so auditing adds no round trip to a
 * request. The cost: a rolled-back event is still persisted; a crash can lose the last rows (not the log line).
 */
export class AuditTrail {
  private queue: AuditEntry[] = []
  private scheduled = false
  private writing: Promise<void> = Promise.resolve()
  private pending = 0
  private dropped = 0

  constructor (
    private readonly store: Pick<Store, 'auditEvents'>,
    private readonly log: AuditLogger
  ) {}

  readonly sink: AuditSink = ({ event, outcome = 'success', actorId, userId, sessionId, email, detail = undefined }, { ip, via }) => {
    // a sign-in through the portal says so (its method is in the session's amr), unless its method outranks
    // it; other events keep their own detail
    if (via !== undefined && (detail === undefined || (event === 'login_succeeded' && !outranksPortal(detail)))) detail = via
    this.log.info({ audit: event, outcome, actor_id: actorId, user_id: userId, session_id: sessionId, email, detail, ip }, 'audit')
    if (this.pending >= PENDING_LIMIT) {
      this.dropped++
      return
    }
    this.pending++
    const nowMs = Date.now()
    this.queue.push({
      id: auditEventId(nowMs),
      at: new Date(nowMs).toISOString(),
      event,
      outcome,
      actorId: actorId ?? null,
      userId: userId ?? null,
      sessionId: sessionId ?? null,
      email: email ?? null,
      address: ip,
      detail: detail ?? null
    })
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => { this.write() })
    }
  }

  /** This instance's pending rows are written first, so an admin sees every request already answered here. */
  async page (filter: AuditFilter, page: number, perPage: number): Promise<{ entries: AuditEntry[], total: number }> {
    await this.flush()
    const [entries, total] = await Promise.all([
      this.store.auditEvents.list(filter, perPage, (page - 1) * perPage),
      this.store.auditEvents.count(filter)
    ])
    return { entries, total }
  }

  async flush (): Promise<void> {
    this.write()
    await this.writing
  }

  private write (): void {
    this.scheduled = false
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, BATCH_LIMIT)
      // chained, so batches land in the order they were recorded
      this.writing = this.writing
        .then(async () => { await this.store.auditEvents.insertMany(batch) })
        .catch((err: unknown) => { this.log.error({ err, events: batch.length }, 'writing audit events failed') })
        .finally(() => { this.settled(batch.length) })
    }
  }

  private settled (rows: number): void {
    this.pending -= rows
    if (this.dropped > 0) {
      this.log.error({ events: this.dropped }, 'audit events dropped: the database fell too far behind')
      this.dropped = 0
    }
  }
}
