import { once } from 'node:events'
import { Redis } from 'ioredis'

export interface ConnectionEvents {
  /** once per outage, not once per retry */
  down (err: Error | undefined): void
  up (): void
}

/* A request never waits on Redis: no offline queue, and a command timeout for a Redis that hangs. */
const COMMAND_TIMEOUT_MS = 250
const CONNECT_TIMEOUT_MS = 1000
const MAX_RETRY_DELAY_MS = 1000

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

/** A refused or slow connection is not waited for: the service starts without it. */
export async function firstReady (redis: Redis): Promise<boolean> {
  if (redis.status === 'ready') return true
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) })
    return true
  } catch {
    return false
  }
}
