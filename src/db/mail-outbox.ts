import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type UpdateObject } from 'kysely'
import type { Database, MailOutboxRow } from './schema.js'

export interface OutgoingMail {
  to: string
  subject: string
  text: string
  html: string
}

/** A row a sender claimed: it alone may settle it, with `claimToken`, until the lease ends. */
export interface ClaimedMail extends OutgoingMail {
  id: string
  claimToken: string
  attempts: number
  createdAt: string
}

export interface OutboxEntry {
  id: string
  to: string
  subject: string | null
  text: string | null
  html: string | null
  createdAt: string
  dueAt: string
  attempts: number
  claimed: boolean
  sentAt: string | null
  abandonedAt: string | null
  lastError: string | null
}

export interface ClaimOptions {
  now: string
  /** a sender that dies holding rows lets them be claimed again then */
  leaseUntil: string
  limit: number
}

function toEntry (row: MailOutboxRow): OutboxEntry {
  return {
    id: row.id,
    to: row.recipient,
    subject: row.subject,
    text: row.text,
    html: row.html,
    createdAt: row.created_at,
    dueAt: row.due_at,
    attempts: row.attempts,
    claimed: row.claim_token !== null,
    sentAt: row.sent_at,
    abandonedAt: row.abandoned_at,
    lastError: row.last_error
  }
}

// bounded, so an SMTP server's answer cannot grow the row
function reason (text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 500)
}

/**
 * Enqueued in the request's own transaction, so the mail exists exactly when what it announces
 * committed. A claim is one statement (SKIP LOCKED / SQLite's single writer): never two holders.
 */
export class MailOutboxRepository {
  constructor (private readonly db: Kysely<Database>, private readonly postgres = false) {}

  async enqueue (mail: OutgoingMail, now = new Date().toISOString()): Promise<string> {
    const id = randomUUID()
    await this.db.insertInto('mail_outbox').values({
      id,
      recipient: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      created_at: now,
      due_at: now,
      attempts: 0
    }).execute()
    return id
  }

  /** `due_at` moves to the end of the lease, so a crashed sender's rows come back. */
  async claim ({ now, leaseUntil, limit }: ClaimOptions): Promise<ClaimedMail[]> {
    const claimToken = randomUUID()
    const rows = await this.db.updateTable('mail_outbox')
      .set({ claim_token: claimToken, due_at: leaseUntil, attempts: sql<number>`attempts + 1` })
      .where('id', 'in', (eb) => {
        const due = eb.selectFrom('mail_outbox').select('id')
          .where('sent_at', 'is', null)
          .where('abandoned_at', 'is', null)
          .where('due_at', '<=', now)
          .orderBy('due_at').orderBy('created_at')
          .limit(limit)
        return this.postgres ? due.forUpdate().skipLocked() : due
      })
      .returningAll()
      .execute()
    const claimed: ClaimedMail[] = []
    for (const row of rows) {
      if (row.subject === null || row.text === null || row.html === null) continue
      claimed.push({ id: row.id, claimToken, to: row.recipient, subject: row.subject, text: row.text, html: row.html, attempts: row.attempts, createdAt: row.created_at })
    }
    return claimed.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  /** The content goes: no link or code is kept. */
  async markSent (mail: Pick<ClaimedMail, 'id' | 'claimToken'>, now: string): Promise<boolean> {
    return await this.settle(mail, { sent_at: now, subject: null, text: null, html: null, claim_token: null, last_error: null })
  }

  async reschedule (mail: Pick<ClaimedMail, 'id' | 'claimToken'>, dueAt: string, error: string): Promise<boolean> {
    return await this.settle(mail, { due_at: dueAt, claim_token: null, last_error: reason(error) })
  }

  async abandon (mail: Pick<ClaimedMail, 'id' | 'claimToken'>, now: string, why: string): Promise<boolean> {
    return await this.settle(mail, { abandoned_at: now, subject: null, text: null, html: null, claim_token: null, last_error: reason(why) })
  }

  async release (mail: Pick<ClaimedMail, 'id' | 'claimToken'>, now: string): Promise<boolean> {
    return await this.settle(mail, { due_at: now, claim_token: null, attempts: sql<number>`attempts - 1` })
  }

  private async settle ({ id, claimToken }: Pick<ClaimedMail, 'id' | 'claimToken'>, values: UpdateObject<Database, 'mail_outbox'>): Promise<boolean> {
    const result = await this.db.updateTable('mail_outbox').set(values)
      .where('id', '=', id)
      .where('claim_token', '=', claimToken)
      .where('sent_at', 'is', null)
      .where('abandoned_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async get (id: string): Promise<OutboxEntry | undefined> {
    const row = await this.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toEntry(row)
  }

  async list (limit = 1000): Promise<OutboxEntry[]> {
    const rows = await this.db.selectFrom('mail_outbox').selectAll().orderBy('created_at').orderBy('id').limit(limit).execute()
    return rows.map(toEntry)
  }

  async deleteSettledBefore (before: string): Promise<number> {
    const result = await this.db.deleteFrom('mail_outbox')
      .where('created_at', '<', before)
      .where((eb) => eb.or([eb('sent_at', 'is not', null), eb('abandoned_at', 'is not', null)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
