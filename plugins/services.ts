import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AuthService } from '../src/auth.js'
import { PasswordHasher } from '../src/passwords.js'
import { RevocationIndex } from '../src/revocation-index.js'
import { RevocationSync } from '../src/revocation-sync.js'
import { SessionService } from '../src/sessions.js'
import { createTokenCodec } from '../src/token-codec.js'
import { FailureThrottle } from '../src/throttle.js'
import { TokenIssuer } from '../src/tokens.js'
import { UserService } from '../src/users.js'

declare module 'fastify' {
  interface FastifyInstance {
    auth: AuthService
    sessions: SessionService
    users: UserService
    revocations: RevocationIndex
  }
}

const PRUNE_INTERVAL_MS = 60_000
// four times a second: a revocation reaches every instance well within the second SPEC §3
// allows, with room left for a busy event loop or a slow query (one small indexed read each time)
const DEFAULT_POLL_MS = 250

/**
 * Builds the framework-free services of src/ from the store and the JWT codec, loads the
 * revocation index, bootstraps the admin, and prunes what has expired once a minute.
 */
export default fp(async function servicesPlugin (fastify: FastifyInstance) {
  const { config, store } = fastify
  const hasher = await PasswordHasher.create(config.argon2)
  fastify.metrics?.instrumentHasher(hasher)
  const tokens = new TokenIssuer(
    createTokenCodec(config.jwtSecret, config.jwtIssuer),
    { issuer: config.jwtIssuer, accessTtl: config.accessTtl, refreshTtl: config.refreshTtl },
    { maxEntries: config.tokenCacheSize }
  )
  const audit = fastify.auditTrail.sink

  const index = new RevocationIndex()
  const now = new Date().toISOString()
  for (const r of await store.revocations.listLive(now)) index.learn(r.sessionId, Date.parse(r.expiresAt))
  const sync = new RevocationSync({
    index,
    source: store.revocations,
    log: fastify.log,
    redis: fastify.redis && config.redisUrl ? { publisher: fastify.redis, url: config.redisUrl, channel: `${config.redisPrefix}revocations` } : undefined,
    pollMs: config.revocationPollMs ?? DEFAULT_POLL_MS,
    // PostgreSQL is shared by nature, and so is one SQLite file under WORKERS > 1
    pollWithoutRedis: config.revocationPollMs !== undefined || store.kind === 'postgres' || config.workers > 1,
    since: Date.parse(now)
  })
  fastify.addHook('onClose', async () => { await sync.close() })
  await sync.start()

  const sessions = new SessionService(store, tokens, index, config, audit)
  const users = new UserService(store, hasher, sessions)
  fastify.decorate('revocations', index)
  fastify.decorate('users', users)
  fastify.decorate('sessions', sessions)
  const throttle = new FailureThrottle(fastify.counters, config.loginMaxFailures, config.loginFailureWindow * 1000)
  fastify.metrics?.instrumentThrottle(throttle)
  fastify.decorate('auth', new AuthService(store, hasher, users, sessions, audit, throttle))

  if (config.admin !== undefined && await users.bootstrapAdmin(config.admin.email, config.admin.password)) {
    fastify.log.info({ email: config.admin.email }, 'created the admin user')
  }

  const prune = async () => {
    const at = new Date()
    index.prune(at.getTime())
    await store.revocations.deleteExpired(at.toISOString())
    await store.sessions.deleteExpired(at.toISOString())
  }
  const timer = setInterval(() => { prune().catch((err) => fastify.log.error({ err }, 'pruning expired sessions failed')) }, PRUNE_INTERVAL_MS)
  timer.unref()
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}, { name: 'services', dependencies: ['config', 'db', 'counters', 'metrics', 'audit'] })
