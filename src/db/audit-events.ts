import { randomBytes, randomInt } from 'node:crypto'
import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { AuditEventRow, Database } from './schema.js'

export interface AuditEntry {
  id: string
  at: string
  event: string
  outcome: string
  actorId: string | null
  userId: string | null
  sessionId: string | null
  email: string | null
  address: string | null
  detail: string | null
}

export interface AuditFilter { userId?: string | undefined, actorId?: string | undefined, event?: string | undefined }

let lastMs = 0
let sequence = 0

/**
 * A UUIDv7 (RFC 9562 §5.7) whose 12-bit rand_a is a counter (§6.2, method 1): ids made by this
 * process sort in the order they were made, even within one millisecond, so events recorded
 * back to back are listed in order. A counter that runs out borrows the next millisecond.
 */
export function auditEventId (nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs
    // a random start (with headroom) so two processes are unlikely to count in step
    sequence = randomInt(0, 0x400)
  } else if (++sequence > 0xfff) {
    lastMs++
    sequence = 0
  }
  const bytes = randomBytes(16)
  bytes.writeUIntBE(lastMs, 0, 6)
  bytes[6] = 0x70 | (sequence >> 8)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function toEntry (row: AuditEventRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    event: row.event,
    outcome: row.outcome,
    actorId: row.actor_id,
    userId: row.user_id,
    sessionId: row.session_id,
    email: row.email,
    address: row.address,
    detail: row.detail
  }
}

/** The persisted audit trail: written in batches, read newest first. */
export class AuditEventRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async insertMany (entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return
    await this.db.insertInto('audit_events').values(entries.map((e) => ({
      id: e.id,
      at: e.at,
      event: e.event,
      outcome: e.outcome,
      actor_id: e.actorId,
      user_id: e.userId,
      session_id: e.sessionId,
      email: e.email,
      address: e.address,
      detail: e.detail
    }))).execute()
  }

  /** Newest first (at, then id, both descending), so a page does not shift as the clock ties. */
  async list (filter: AuditFilter, limit: number, offset: number): Promise<AuditEntry[]> {
    const rows = await this.filtered(this.db.selectFrom('audit_events').selectAll(), filter)
      .orderBy('at', 'desc').orderBy('id', 'desc')
      .limit(limit).offset(offset)
      .execute()
    return rows.map(toEntry)
  }

  async count (filter: AuditFilter): Promise<number> {
    const row = await this.filtered(this.db.selectFrom('audit_events').select((eb) => eb.fn.countAll<number | string>().as('total')), filter)
      .executeTakeFirstOrThrow()
    return Number(row.total)
  }

  private filtered<O> (query: SelectQueryBuilder<Database, 'audit_events', O>, { userId, actorId, event }: AuditFilter) {
    if (userId !== undefined) query = query.where('user_id', '=', userId)
    if (actorId !== undefined) query = query.where('actor_id', '=', actorId)
    if (event !== undefined) query = query.where('event', '=', event)
    return query
  }
}
