import type { AuditSink, ServiceEvents } from '../events.js'
import type { Config } from '../config/config.js'
import type { DataKey } from '../crypto/envelope.js'
import { KeyedHash } from '../crypto/keyed-hash.js'
import type { Store } from '../db/store.js'
import type { CounterStore } from '../limits/throttle.js'
import type { CoreLogger } from '../logging/logger.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'
import type { RecentAuthentication } from '../accounts/recent-auth.js'
import type { SessionService } from '../sessions/session-service.js'
import { ApiKeyService } from './api-key-service.js'
import { ApiKeyVerifier } from './key-verifier.js'

export interface ApiKeys { service: ApiKeyService, verifier: ApiKeyVerifier }

export interface ApiKeyDependencies {
  config: Config
  store: Store
  sessions: SessionService
  recentAuth: RecentAuthentication
  index: RevocationIndex
  audit: AuditSink
  counters: CounterStore
  events: ServiceEvents
  log: Pick<CoreLogger, 'error'>
}

/** The per-purpose key of each data key: a key's hash is checked under the data key its row names. */
const PURPOSE = 'gatehouse api keys'

/** ENABLE_API_KEYS: the service and the verifier (src/config/config.ts guarantees the data keys when on). */
export function createApiKeys (deps: ApiKeyDependencies): ApiKeys | undefined {
  const { config } = deps
  const settings = config.apiKeys
  const dataKeys: DataKey[] = config.dataEncryptionKeys ?? []
  const first = dataKeys[0]
  if (settings === undefined || first === undefined) return undefined
  const hashers = new Map(dataKeys.map(({ id, key }) => [id, new KeyedHash(key, PURPOSE)]))
  const rate = settings.rateLimit
  const verifier = new ApiKeyVerifier({
    store: deps.store,
    index: deps.index,
    hashers,
    issuer: config.jwtIssuer,
    log: deps.log,
    limit: rate && { counters: deps.counters, max: rate.max, windowMs: rate.windowSeconds * 1000, refused: () => { deps.events.emit('throttled', { limiter: 'other' }) } }
  })
  const service = new ApiKeyService({
    store: deps.store,
    sessions: deps.sessions,
    recentAuth: deps.recentAuth,
    audit: deps.audit,
    hasher: { id: first.id, hash: hashers.get(first.id) as KeyedHash },
    settings: { maxTtl: settings.maxTtl, maxPerUser: settings.maxPerUser, defaultRoles: config.defaultRoles }
  })
  return { service, verifier }
}
