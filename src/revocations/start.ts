import type { Redis } from 'ioredis'
import type { Config } from '../config/config.js'
import type { Store } from '../db/store.js'
import type { RevocationIndex } from './revocation-index.js'
import { revocationChannel, revocationMessage, RevocationSync, type SyncFeed, type SyncLogger } from './revocation-sync.js'

const PRUNE_INTERVAL_MS = 60_000
// four times a second: a revocation reaches every instance well within the second allowed,
// with room left for a busy event loop or a slow query (one small indexed read each time)
const DEFAULT_POLL_MS = 250

export interface RevocationOptions {
  index: RevocationIndex
  store: Store
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'revocationPollMs' | 'workers'>
  log: SyncLogger
  /** the shared Redis connection, when REDIS_URL is set: revocations are broadcast through it */
  redis?: Redis | undefined
  /** this instance's wall clock (ms since the epoch): what has expired is judged by it */
  clock?: () => number
  /** the other changes kept in step by the same sync (the signing keys') */
  feeds?: SyncFeed[]
}

/**
 * Loads the live revocations into the index, keeps it in step with the other instances
 * (src/revocations/revocation-sync.ts) and prunes what has expired once a minute, from memory
 * and from the database. Resolves once the index is loaded; `close` stops it all.
 */
export async function startRevocations ({ index, store, config, log, redis, clock = Date.now, feeds }: RevocationOptions): Promise<{ close (): Promise<void> }> {
  const now = new Date(clock()).toISOString()
  for (const r of await store.revocations.listLive(now)) index.learn(r.sessionId, Date.parse(r.expiresAt))
  const sync = new RevocationSync({
    index,
    source: store.revocations,
    log,
    redis: redis && config.redisUrl ? { publisher: redis, url: config.redisUrl, channel: revocationChannel(config.redisPrefix) } : undefined,
    pollMs: config.revocationPollMs ?? DEFAULT_POLL_MS,
    // every database is shared: PostgreSQL by nature, a SQLite file with WORKERS > 1 and with the
    // command line, whose revocations a lone server must hear as well (REVOCATION_POLL_MS=0 opts out)
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
 * For a short-lived process (the command line): the revocations and feed changes it makes are
 * published once, at `close`, on a Redis connection of its own. Running servers subscribed to
 * Redis poll the database only while it is down, so they hear of these through it; without
 * REDIS_URL they read them from the database within a second. `close` rejects when Redis could
 * not take them (they are stored all the same).
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
