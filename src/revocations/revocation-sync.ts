import type { Redis } from 'ioredis'
import type { Revocation } from '../db/revocations.js'
import type { CoreLogger } from '../logging/logger.js'
import type { RevocationIndex } from './revocation-index.js'

export interface RevocationSource { listAfter (id: number): Promise<Revocation[]> }

export type SyncLogger = CoreLogger

/**
 * Another kind of change kept in step the same way, on a channel of its own (the signing keys,
 * src/keys/key-changes.ts): what is made here is published, what is published elsewhere is
 * received, and whenever the broadcast may have missed something the feed reads the database.
 */
export interface SyncFeed {
  /** its pub/sub channel under REDIS_PREFIX */
  readonly channel: string
  /** takes the function that publishes a change made here */
  onLocal (publish: (text: string) => void): void
  /** a change published elsewhere (or echoed back from here) */
  receive (text: string): void
  /** reads what the broadcast may have missed */
  catchUp (): Promise<void>
}

export interface RevocationSyncOptions {
  index: RevocationIndex
  source: RevocationSource
  log: SyncLogger
  /** Broadcast through Redis pub/sub: `publisher` is shared, the subscriber gets its own connection to `url`. */
  redis?: { publisher: Redis, url: string, channel: string }
  /** ms between catch-up reads while nothing broadcasts (no Redis, or Redis unreachable); 0 = never */
  pollMs: number
  /** Whether to poll when there is no Redis at all (the store is shared by several processes). */
  pollWithoutRedis: boolean
  /** the other changes carried by the same connections and the same catch-up */
  feeds?: SyncFeed[]
}

/*
 * New revocations are found by the database's sequence (`revocations.id`), never by comparing
 * times: each instance's clock may be off, and one 10 s ahead used to skip every revocation
 * made elsewhere. A transaction may still commit after one that took a later id, so each read
 * goes back to the highest id this process had seen OVERLAP_MS before (measured on its own
 * monotonic clock, which no other instance's clock can shift): a row that lands out of order
 * within that time is still read. Learning one twice is harmless.
 */
const OVERLAP_MS = 5000

/** How often the subscription is checked for a Redis that hangs (a ping, under the command timeout). */
const HEARTBEAT_MS = 1000

/** Bounds the revocations kept for a publisher that is down; past it, receivers' catch-up is the net. */
const MAX_UNSENT = 10_000

interface Message { session_id: string, expires_at: number }

/** A message waiting for its publisher's connection; one that has expired is dropped. */
interface Unsent { channel: string, text: string, expiresAt: number }

/** The pub/sub channel of revocations under REDIS_PREFIX. */
export function revocationChannel (prefix: string): string {
  return `${prefix}revocations`
}

/** A revocation as it travels on the channel (the command line publishes the same). */
export function revocationMessage (sessionId: string, expiresAt: number): string {
  return JSON.stringify({ session_id: sessionId, expires_at: expiresAt } satisfies Message)
}

/**
 * Keeps every instance's revocation index true (docs/api.md#revocation: refused everywhere within a second,
 * no database read per request). A revocation made here is published; one published elsewhere
 * is learnt. Whenever the subscription is (re)made, the revocations the broadcast may have
 * missed are read from the database; while there is no broadcast, they are read every `pollMs`.
 */
export class RevocationSync {
  /** reads ask for ids above this; until this process has read for OVERLAP_MS, every row */
  private after = 0
  private highest = 0
  /** the highest id seen at each read (monotonic ms), kept for OVERLAP_MS */
  private readonly seen: Array<{ at: number, id: number }> = []
  private subscriber: Redis | undefined
  private timer: NodeJS.Timeout | undefined
  private heartbeat: NodeJS.Timeout | undefined
  /** the subscription is known to be down (an outage is reported once) */
  private down = false
  /** the connection is open but Redis does not answer */
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

  /** Reads the revocations newer than the last one seen (less the overlap) into the index. */
  async catchUp (): Promise<void> {
    // one read at a time, and always a fresh one: a read already under way may have started
    // before the rows this call is after were committed
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

  /*
   * A message this instance could not send is kept and sent when its connection returns: the
   * other instances' connections may never have dropped, so no catch-up of theirs would find it.
   */
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

  /*
   * A Redis that hangs keeps the subscription open and silent, which looks like a quiet one: a
   * ping that times out counts as an outage (reported, the poll starts), and the first ping
   * answered after it re-subscribes and catches up.
   */
  private checkAlive (subscriber: Redis, channel: string): void {
    if (this.closed || subscriber.status !== 'ready') return
    subscriber.ping().then(() => {
      if (!this.hung) return
      this.restored()
      // messages published during the hang may be lost: subscribe again and catch up
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
    // the poll alone never keeps a process (or a test run) alive
    this.timer.unref()
  }

  private stopPolling (): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** A database outage is logged once, not on every poll. */
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
