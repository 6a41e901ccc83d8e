import type { Redis } from 'ioredis'
import type { Config } from '../config/config.js'
import type { Store } from '../db/store.js'
import type { RevocationIndex } from './revocation-index.js'
import { revocationChannel, revocationMessage, RevocationSync, type SyncFeed, type SyncLogger } from './revocation-sync.js'

const PRUNE_INTERVAL_MS = 60_000
// well within the second allowed (docs/benchmarks.md)
const DEFAULT_POLL_MS = 250

export interface RevocationOptions {
  index: RevocationIndex
  store: Store
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'revocationPollMs' | 'workers'>
  log: SyncLogger
  redis?: Redis | undefined
  clock?: () => number
  feeds?: SyncFeed[]
}

/** Resolves once the index is loaded. */
export async function startRevocations ({ index, store, config, log, redis, clock = Date.now, feeds }: RevocationOptions): Promise<{ close (): Promise<void> }> {
  const now = new Date(clock()).toISOString()
  for (const r of await store.revocations.listLive(now)) index.learn(r.sessionId, Date.parse(r.expiresAt))
  const sync = new RevocationSync({
    index,
    source: store.revocations,
    log,
    redis: redis && config.redisUrl ? { publisher: redis, url: config.redisUrl, channel: revocationChannel(config.redisPrefix) } : undefined,
    pollMs: config.revocationPollMs ?? DEFAULT_POLL_MS,
    // every database is shared: a SQLite file too, with WORKERS > 1 and with the command line
    pollWithoutRedis: true,
    feeds
  })
  await sync.start()

  const prune = async () => {
    const at = new Date(clock())
    index.prune(at.getTime())
    await store.revocations.deleteExpired(at.toISOString())
    await store.sessions.deleteExpired(at.toISOString())
  }
  const timer = setInterval(() => { prune().catch((err) => log.error({ err }, 'pruning expired sessions failed')) }, PRUNE_INTERVAL_MS)
  timer.unref()
  return {
    async close () {
      clearInterval(timer)
      await sync.close()
    }
  }
}

/**
 * For the command line: its changes are published once, at `close`; servers without Redis read
 * them from the database. `close` rejects when Redis could not take them.
 */
export function deferRevocations ({ index, config, feeds = [] }: Pick<RevocationOptions, 'index' | 'config' | 'feeds'>): { close (): Promise<void> } {
  const { redisUrl, redisPrefix } = config
  const pending: Array<{ channel: string, text: string }> = []
  if (redisUrl === undefined) return { async close () {} }
  index.onAdd((sessionId, expiresAt) => { pending.push({ channel: revocationChannel(redisPrefix), text: revocationMessage(sessionId, expiresAt) }) })
  for (const feed of feeds) feed.onLocal((text) => { pending.push({ channel: feed.channel, text }) })
  return {
    async close () {
      if (pending.length === 0) return
      const { createRedis, firstReady } = await import('../db/redis.js')
      const redis = createRedis(redisUrl, { down () {}, up () {} }, 'gatehouse-cli')
      try {
        if (!await firstReady(redis)) throw new Error('Redis is unreachable')
        for (const { channel, text } of pending.splice(0)) await redis.publish(channel, text)
      } finally {
        redis.disconnect()
      }
    }
  }
}
