import { auditEventId, type AuditEntry, type AuditFilter } from '../db/audit-events.js'
import type { Store } from '../db/store.js'
import type { AuditSink } from '../events.js'

/** The part of a pino logger the trail writes to. */
export interface AuditLogger {
  info (fields: object, message: string): void
  error (fields: object, message: string): void
}

/** SQLite binds at most 32766 parameters per statement; 10 per row leaves room. */
const BATCH_LIMIT = 500
/** Rows waiting for a slow or failing database are held in memory up to this many; then dropped (and counted). */
const PENDING_LIMIT = 50_000

/**
 * Every audit event becomes a log line at once and a row in `audit_events` just after: rows
 * are queued and written in one insert per turn of the event loop, once the request that
 * caused them has been answered, so auditing adds no database round trip to a request and
 * a failed insert is logged, never the client's 500. The cost: an event recorded inside a
 * transaction that then rolls back is still persisted, and a crash can lose the last few
 * rows (the log line has them).
 */
export class AuditTrail {
  private queue: AuditEntry[] = []
  private scheduled = false
  private writing: Promise<void> = Promise.resolve()
  /** rows queued or being written */
  private pending = 0
  private dropped = 0

  constructor (
    private readonly store: Pick<Store, 'auditEvents'>,
    private readonly log: AuditLogger
  ) {}

  readonly sink: AuditSink = ({ event, outcome = 'success', actorId, userId, sessionId, email, detail }, { ip }) => {
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

  /**
   * One page, newest first. This instance's pending rows are written first, so an admin sees
   * the events of every request already answered here.
   */
  async page (filter: AuditFilter, page: number, perPage: number): Promise<{ entries: AuditEntry[], total: number }> {
    await this.flush()
    const [entries, total] = await Promise.all([
      this.store.auditEvents.list(filter, perPage, (page - 1) * perPage),
      this.store.auditEvents.count(filter)
    ])
    return { entries, total }
  }

  /** Resolves once every event recorded so far is written (or its failure logged). */
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
