import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { OutboxEntry } from '../../src/db/mail-outbox.js'
import type { Store } from '../../src/db/store.js'
import type { OutgoingMail } from '../../src/mail/templates.js'

/**
 * Enqueues as a request does: the mail in a transaction (here alone), then a wake of the local
 * sender once it has committed. Returns the row's id.
 */
export async function enqueue (app: FastifyInstance, mail: OutgoingMail): Promise<string> {
  const id = await app.store.transaction(async (tx) => await tx.mailOutbox.enqueue(mail))
  app.services.mail.wake()
  return id
}

/** Polls the outbox row until `predicate` holds (or fails after `ms`). */
export async function waitForRow (store: Store, id: string, predicate: (row: OutboxEntry) => boolean, ms = 15_000): Promise<OutboxEntry> {
  const deadline = Date.now() + ms
  let row: OutboxEntry | undefined
  for (;;) {
    row = await store.mailOutbox.get(id)
    if (row !== undefined && predicate(row)) return row
    if (Date.now() > deadline) throw new Error(`outbox row ${id} did not reach the expected state within ${ms} ms: ${JSON.stringify(row)}`)
    await sleep(25)
  }
}
