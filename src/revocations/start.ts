import type { Redis } from 'ioredis'
import type { Config } from '../config/config.js'
import type { Store } from '../db/store.js'
import type { RevocationIndex } from './revocation-index.js'
import { revocationChannel, RevocationSync, type SyncLogger } from './revocation-sync.js'

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
}

/**
 * Loads the live revocations into the index, keeps it in step with the other instances
 * (src/revocations/revocation-sync.ts) and prunes what has expired once a minute, from memory
 * and from the database. Resolves once the index is loaded; `close` stops it all.
 */
export async function startRevocations ({ index, store, config, log, redis, clock = Date.now }: RevocationOptions): Promise<{ close (): Promise<void> }> {
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
    pollWithoutRedis: true
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
