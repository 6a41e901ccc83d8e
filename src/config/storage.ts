import { join, resolve } from 'node:path'
import { Type, type Static, type TObject } from '@sinclair/typebox'

/** Where data lives (files, databases, Redis), spread into the one ConfigSchema (src/config/config.ts). */
export const StorageSettings = {
  DATA_DIR: Type.String({
    default: './data',
    minLength: 1,
    description: 'where the default SQLite file and the development secret live; created with mode 0700'
  }),
  DATABASE_URL: Type.Optional(Type.String({
    pattern: '^(sqlite:|postgres(ql)?://)',
    maxLength: 4096,
    examples: ['postgres://gatehouse:password@db.internal:5432/gatehouse'],
    description: '`sqlite:<path>` (files mode 0600), `sqlite::memory:` or `postgres://…`; unset: `sqlite:<DATA_DIR>/gatehouse.db`'
  })),
  DATABASE_POOL_MAX: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description: 'PostgreSQL connections per process: instances × `WORKERS` × this must stay under the server\'s `max_connections`'
  }),
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    maxLength: 4096,
    examples: ['redis://redis.internal:6379'],
    description: '`redis://…` or `rediss://…`: rate-limit counters and the revocation broadcast shared between instances'
  })),
  REDIS_PREFIX: Type.String({
    default: 'gatehouse:',
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    description: 'prefix of every Redis key and of the revocation channel, so several deployments (or test runs) can share one Redis'
  }),
  REVOCATION_POLL_MS: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 60000,
    description: 'milliseconds between reads of new revocations from the database when no Redis carries them: ' +
      'unset means 250, on SQLite too, so a revocation made by another process (a worker, the command line) is heard; `0` never polls'
  }))
}

export interface StorageConfig {
  /** absolute */
  dataDir: string
  databaseUrl: string
  databasePoolMax: number
  redisUrl: string | undefined
  redisPrefix: string
  /** undefined: poll only where the store is shared by nature (PostgreSQL) and Redis is absent */
  revocationPollMs: number | undefined
}

export function storageConfig (raw: Static<TObject<typeof StorageSettings>>): StorageConfig {
  const dataDir = resolve(raw.DATA_DIR)
  return {
    dataDir,
    databaseUrl: raw.DATABASE_URL ?? `sqlite:${join(dataDir, 'gatehouse.db')}`,
    databasePoolMax: raw.DATABASE_POOL_MAX,
    redisUrl: raw.REDIS_URL,
    redisPrefix: raw.REDIS_PREFIX,
    revocationPollMs: raw.REVOCATION_POLL_MS
  }
}
