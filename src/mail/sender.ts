import type { ClaimedMail, MailOutboxRepository } from '../db/mail-outbox.js'
import type { CoreLogger } from '../logging/logger.js'
import type { ServiceEvents } from '../events.js'
import type { MailTransport } from './transport.js'

export interface SenderOptions {
  outbox: Pick<MailOutboxRepository, 'claim' | 'markSent' | 'reschedule' | 'abandon' | 'release' | 'deleteSettledBefore'>
  /** none: production without SMTP_URL */
  transport: MailTransport | undefined
  events: ServiceEvents
  log: Pick<CoreLogger, 'info' | 'warn'>
  clock?: () => number
  pollMs?: number
  batchSize?: number
  /** must outlast one delivery: a claimed row returns after this if its sender died */
  leaseMs?: number
  maxAttempts?: number
  /** every link and code in a mail has expired by then */
  maxAgeMs?: number
  maxBackoffMs?: number
  /** inside the server's shutdown grace */
  closeTimeoutMs?: number
}

const DAY_MS = 86_400_000
const SETTLED_RETENTION_MS = 7 * DAY_MS
const PRUNE_EVERY_MS = 3_600_000

function describe (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const { code, responseCode } = err as { code?: unknown, responseCode?: unknown }
  return [typeof code === 'string' ? code : '', typeof responseCode === 'number' ? String(responseCode) : '', err.message].filter(Boolean).join(' ')
}

function permanent (err: unknown): boolean {
  const { code, responseCode } = err as { code?: unknown, responseCode?: unknown }
  return code === 'EENVELOPE' && typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600
}

/**
 * Delivers the mail outbox, one per instance (claims never overlap), with jittered exponential
 * backoff. Nothing runs inside a request, so SMTP's speed cannot change an answer or its timing.
 */
export class MailSender {
  private readonly clock: () => number
  private readonly pollMs: number
  private readonly batchSize: number
  private readonly leaseMs: number
  private readonly maxAttempts: number
  private readonly maxAgeMs: number
  private readonly maxBackoffMs: number
  private readonly closeTimeoutMs: number
  private started = false
  private closing = false
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private claimFailing = false
  private prunedAt = 0

  constructor (private readonly options: SenderOptions) {
    this.clock = options.clock ?? Date.now
    this.pollMs = options.pollMs ?? 1000
    this.batchSize = options.batchSize ?? 10
    this.leaseMs = options.leaseMs ?? 300_000
    this.maxAttempts = options.maxAttempts ?? 150
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5000
  }

  get enabled (): boolean {
    return this.options.transport !== undefined
  }

  start (): void {
    if (this.started || this.closing || !this.enabled) return
    this.started = true
    this.schedule(0)
  }

  wake (): void {
    if (!this.started || this.closing) return
    if (this.running !== undefined) this.again = true
    else this.schedule(0)
  }

  /** A delivery still hanging after `closeTimeoutMs` is left to its lease, which returns the row. */
  async close (): Promise<void> {
    this.closing = true
    clearTimeout(this.timer)
    const running = this.running
    if (running !== undefined) {
      let timeout: NodeJS.Timeout | undefined
      await Promise.race([running, new Promise<void>((resolve) => { timeout = setTimeout(resolve, this.closeTimeoutMs) })])
      clearTimeout(timeout)
    }
    this.options.transport?.close()
  }

  private schedule (ms: number): void {
    if (this.closing) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.timer = undefined; this.pass() }, ms)
    // a sender never keeps a process alive: the server stays up for its own reasons, the CLI exits
    this.timer.unref()
  }

  /** `wake` during a pass asks the running one to go again. */
  private pass (): void {
    this.running = this.loop().finally(() => {
      this.running = undefined
      this.schedule(this.again ? 0 : this.pollMs)
    })
  }

  private async loop (): Promise<void> {
    do {
      this.again = false
      const claimed = await this.claim()
      if (claimed === this.batchSize) this.again = true
    } while (this.again && !this.closing)
    await this.prune()
  }

  private async claim (): Promise<number> {
    const now = this.clock()
    let claimed: ClaimedMail[]
    try {
      claimed = await this.options.outbox.claim({ now: iso(now), leaseUntil: iso(now + this.leaseMs), limit: this.batchSize })
    } catch (err) {
      // the database is away: reported once per outage, and read again at the next poll
      if (!this.claimFailing) this.options.log.warn({ err: describe(err) }, 'reading the mail outbox failed; retrying every poll')
      this.claimFailing = true
      return 0
    }
    if (this.claimFailing) this.options.log.info({}, 'reading the mail outbox works again')
    this.claimFailing = false
    await Promise.all(claimed.map(async (mail) => { await this.deliver(mail) }))
    return claimed.length
  }

  private async deliver (mail: ClaimedMail): Promise<void> {
    const { outbox, transport, events, log } = this.options
    try {
      if (this.closing || transport === undefined) {
        await outbox.release(mail, iso(this.clock()))
        return
      }
      try {
        await transport.send(mail)
      } catch (err) {
        await this.failed(mail, err)
        return
      }
      events.emit('mail', { outcome: 'sent' })
      if (!await outbox.markSent(mail, iso(this.clock()))) log.warn({ mailId: mail.id }, 'a mail was delivered after its claim had lapsed: it may be delivered again')
    } catch (err) {
      // the outbox could not be updated: the row's lease brings it back
      log.warn({ mailId: mail.id, err: describe(err) }, 'settling a mail outbox row failed')
    }
  }

  private async failed (mail: ClaimedMail, err: unknown): Promise<void> {
    const { outbox, events, log } = this.options
    const now = this.clock()
    const why = describe(err)
    const age = now - Date.parse(mail.createdAt)
    const giveUp = permanent(err) ? 'refused for good' : mail.attempts >= this.maxAttempts ? `${mail.attempts} attempts` : age >= this.maxAgeMs ? `${Math.round(age / 1000)} s` : undefined
    if (giveUp !== undefined) {
      await outbox.abandon(mail, iso(now), `abandoned after ${giveUp}: ${why}`)
      events.emit('mail', { outcome: 'abandoned' })
      log.warn({ mailId: mail.id, attempts: mail.attempts, reason: why }, 'mail abandoned')
      return
    }
    const delay = Math.min(1000 * 2 ** (mail.attempts - 1), this.maxBackoffMs) * (0.8 + Math.random() * 0.4)
    await outbox.reschedule(mail, iso(now + delay), why)
    events.emit('mail', { outcome: 'retried' })
    log.warn({ mailId: mail.id, attempts: mail.attempts, reason: why, retryInMs: Math.round(delay) }, 'mail delivery failed; will retry')
  }

  private async prune (): Promise<void> {
    const now = this.clock()
    if (now - this.prunedAt < PRUNE_EVERY_MS || this.closing) return
    this.prunedAt = now
    try {
      await this.options.outbox.deleteSettledBefore(iso(now - SETTLED_RETENTION_MS))
    } catch {
      // the next pass an hour later tries again; claim failures are what gets reported
    }
  }
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}
