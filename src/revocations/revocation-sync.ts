import type { Redis } from 'ioredis'
import type { Revocation } from '../db/revocations.js'
import type { CoreLogger } from '../logging/logger.js'
import type { RevocationIndex } from './revocation-index.js'

export interface RevocationSource { listAfter (id: number): Promise<Revocation[]> }

export type SyncLogger = CoreLogger

/** Another kind of change kept in step the same way, on a channel of its own (the signing keys). */
export interface SyncFeed {
  readonly channel: string
  onLocal (publish: (text: string) => void): void
  receive (text: string): void
  catchUp (): Promise<void>
}

export interface RevocationSyncOptions {
  index: RevocationIndex
  source: RevocationSource
  log: SyncLogger
  redis?: { publisher: Redis, url: string, channel: string }
  /** ms; 0 = never */
  pollMs: number
  pollWithoutRedis: boolean
  feeds?: SyncFeed[]
}

/*
 * Revocations are read by id, never by time: instance clocks differ. A transaction may commit
 * after one with a later id, so each read goes back to the id seen OVERLAP_MS before.
 */
const OVERLAP_MS = 5000

const HEARTBEAT_MS = 1000

// past it, receivers' catch-up is the net
const MAX_UNSENT = 10_000

interface Message { session_id: string, expires_at: number }

interface Unsent { channel: string, text: string, expiresAt: number }

export function revocationChannel (prefix: string): string {
  return `${prefix}revocations`
}

export function revocationMessage (sessionId: string, expiresAt: number): string {
  return JSON.stringify({ session_id: sessionId, expires_at: expiresAt } satisfies Message)
}

/** Keeps every instance's revocation index true: published here, learnt elsewhere, caught up from the database. */
export class RevocationSync {
  private after = 0
  private highest = 0
  private readonly seen: Array<{ at: number, id: number }> = []
  private subscriber: Redis | undefined
  private timer: NodeJS.Timeout | undefined
  private heartbeat: NodeJS.Timeout | undefined
  private down = false
  private hung = false
  private readFailing = false
  private reading: Promise<void> | undefined
  private closed = false
  private readonly unsent: Unsent[] = []
  private readonly feeds: SyncFeed[]

  constructor (private readonly options: RevocationSyncOptions) {
    this.feeds = options.feeds ?? []
  }

  async start (): Promise<void> {
    const { redis, index } = this.options
    if (redis === undefined) {
      if (this.options.pollWithoutRedis) this.startPolling()
      return
    }
    const { createRedis, firstReady } = await import('../db/redis.js')
    index.onAdd((sessionId, expiresAt) => { this.publish(redis.publisher, { channel: redis.channel, text: revocationMessage(sessionId, expiresAt), expiresAt }) })
    for (const feed of this.feeds) feed.onLocal((text) => { this.publish(redis.publisher, { channel: feed.channel, text, expiresAt: Infinity }) })
    redis.publisher.on('ready', () => { this.flush(redis.publisher) })
    const subscriber = createRedis(redis.url, {
      down: (err) => { this.lost(err) },
      up: () => { this.restored() }
    }, 'gatehouse-revocations')
    this.subscriber = subscriber
    subscriber.on('message', (channel: string, text: string) => {
      if (channel === redis.channel) this.receive(text)
      else this.feeds.find((feed) => feed.channel === channel)?.receive(text)
    })
    this.heartbeat = setInterval(() => { this.checkAlive(subscriber, redis.channel) }, HEARTBEAT_MS)
    this.heartbeat.unref()
    const ready = await firstReady(subscriber)
    // after every reconnect: subscribe first, then read what may have been missed meanwhile
    subscriber.on('ready', () => { this.resubscribe(subscriber, redis.channel).catch(() => {}) })
    if (ready || subscriber.status === 'ready') await this.resubscribe(subscriber, redis.channel)
    else this.startPolling()
  }

  async close (): Promise<void> {
    this.closed = true
    this.stopPolling()
    clearInterval(this.heartbeat)
    this.subscriber?.disconnect()
    await this.reading?.catch(() => {})
  }

  async catchUp (): Promise<void> {
    // always a fresh read: one under way may predate the rows this call is after
    const reading = (this.reading?.catch(() => {}) ?? Promise.resolve()).then(async () => { await this.read() })
    this.reading = reading
    try {
      await reading
    } finally {
      if (this.reading === reading) this.reading = undefined
    }
  }

  private async read (): Promise<void> {
    const now = performance.now()
    for (let oldest = this.seen[0]; oldest !== undefined && oldest.at <= now - OVERLAP_MS; oldest = this.seen[0]) {
      this.after = oldest.id
      this.seen.shift()
    }
    const rows = await this.options.source.listAfter(this.after)
    for (const revocation of rows) {
      this.options.index.learn(revocation.sessionId, Date.parse(revocation.expiresAt))
      this.highest = Math.max(this.highest, revocation.id)
    }
    this.seen.push({ at: now, id: this.highest })
    for (const feed of this.feeds) await feed.catchUp()
  }

  private async resubscribe (subscriber: Redis, channel: string): Promise<void> {
    if (this.closed || subscriber.status !== 'ready') return
    try {
      await subscriber.subscribe(channel, ...this.feeds.map((feed) => feed.channel))
    } catch {
      // the connection dropped again: its next 'ready' retries, and the poll covers meanwhile
      this.startPolling()
      return
    }
    this.stopPolling()
    await this.catchUpLogged()
  }

  // kept for the connection's return: other instances' connections may never have dropped
  private publish (publisher: Redis, message: Unsent): void {
    if (this.closed) return
    if (publisher.status !== 'ready') {
      this.keep(message)
      return
    }
    publisher.publish(message.channel, message.text).catch(() => { this.keep(message) })
  }

  private keep (message: Unsent): void {
    if (this.unsent.length < MAX_UNSENT) this.unsent.push(message)
  }

  private flush (publisher: Redis): void {
    const now = Date.now()
    const unsent = this.unsent.splice(0).filter((m) => m.expiresAt > now)
    for (const message of unsent) this.publish(publisher, message)
  }

  private receive (text: string): void {
    let message: Partial<Message>
    try {
      message = JSON.parse(text) as Partial<Message>
    } catch {
      return
    }
    const { session_id: sessionId, expires_at: expiresAt } = message
    if (typeof sessionId === 'string' && sessionId.length <= 64 && typeof expiresAt === 'number' && Number.isFinite(expiresAt)) {
      this.options.index.learn(sessionId, expiresAt)
    }
  }

  // a hung Redis looks like a quiet one: a ping that times out counts as an outage
  private checkAlive (subscriber: Redis, channel: string): void {
    if (this.closed || subscriber.status !== 'ready') return
    subscriber.ping().then(() => {
      if (!this.hung) return
      this.restored()
      return this.resubscribe(subscriber, channel)
    }, (err: Error) => {
      if (!this.hung && !this.closed && subscriber.status === 'ready') this.lost(err)
      this.hung = true
    }).catch(() => {})
  }

  private lost (err: Error | undefined): void {
    if (this.down) return
    this.down = true
    this.options.log.warn({ err: err?.message }, 'revocation broadcast lost: reading revocations from the database until Redis returns')
    this.startPolling()
  }

  private restored (): void {
    this.hung = false
    if (!this.down) return
    this.down = false
    this.options.log.info({}, 'revocation broadcast restored')
  }

  private startPolling (): void {
    if (this.closed || this.timer !== undefined || this.options.pollMs <= 0) return
    // a slow database skips ticks rather than piling reads up
    this.timer = setInterval(() => { if (this.reading === undefined) this.catchUpLogged().catch(() => {}) }, this.options.pollMs)
    this.timer.unref()
  }

  private stopPolling (): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  private async catchUpLogged (): Promise<void> {
    try {
      await this.catchUp()
      this.readFailing = false
    } catch (err) {
      if (!this.closed && !this.readFailing) this.options.log.error({ err }, 'reading new revocations failed')
      this.readFailing = true
    }
  }
}
