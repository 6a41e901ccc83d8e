import { once } from 'node:events'
import { Redis } from 'ioredis'

export interface ConnectionEvents {
  /** The connection was lost (or never made): called once per outage, not once per retry. */
  down (err: Error | undefined): void
  /** The connection is ready again after an outage. */
  up (): void
}

/*
 * A request must never wait on Redis: with no offline queue a command fails at once while
 * disconnected, and a Redis that hangs is cut off by the command timeout. Reconnects retry
 * forever, at most a second apart, so a returning Redis is used again within about a second.
 */
const COMMAND_TIMEOUT_MS = 250
const CONNECT_TIMEOUT_MS = 1000
const MAX_RETRY_DELAY_MS = 1000

/** A client for REDIS_URL that reports its outages through `events` (once each) and never stalls a caller. */
export function createRedis (url: string, events: ConnectionEvents, name = 'gatehouse'): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    autoResubscribe: false,
    retryStrategy: (times) => Math.min(times * 100, MAX_RETRY_DELAY_MS)
  })
  watch(redis, events)
  return redis
}

function watch (redis: Redis, events: ConnectionEvents): void {
  // `connected` starts true so that a Redis already down at start is reported as one outage
  let connected = true
  let lastError: Error | undefined
  const lost = () => {
    if (!connected) return
    connected = false
    events.down(lastError)
  }
  redis.on('ready', () => {
    lastError = undefined
    if (!connected) events.up()
    connected = true
  })
  // without an 'error' listener ioredis prints every failed retry to the console
  redis.on('error', (err: Error) => { lastError = err })
  // emitted only when a retry is scheduled, so a deliberate disconnect at shutdown is no outage
  redis.on('reconnecting', lost)
}

/**
 * Waits (briefly) for the first connection, so requests right after start are counted in
 * Redis; a refused or slow connection is not waited for — the service starts without it.
 */
export async function firstReady (redis: Redis): Promise<boolean> {
  if (redis.status === 'ready') return true
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) })
    return true
  } catch {
    return false
  }
}
