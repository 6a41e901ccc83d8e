import { randomUUID } from 'node:crypto'
import type { AuditSink, RequestContext } from '../events.js'
import type { ApiKey } from '../db/api-keys.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { EmailTaken, Forbidden, NotFound, NotServiceAccount, TooManyApiKeys, ValidationFailed } from '../errors.js'
import type { KeyedHash } from '../crypto/keyed-hash.js'
import type { RecentAuthentication } from '../accounts/recent-auth.js'
import type { SessionService } from '../sessions/session-service.js'
import type { Claims } from '../tokens/claims.js'
import { generateKey } from './format.js'

export interface NewApiKey {
  name: string
  roles?: string[] | undefined
  /** RFC 3339; default: API_KEY_MAX_TTL from now */
  expiresAt?: string | undefined
}

/** Who asks: the audit trail's actor and the request. */
export interface KeyRequester { actorId?: string | undefined, context: RequestContext }

export interface ApiKeyServiceOptions {
  store: Store
  sessions: SessionService
  recentAuth: RecentAuthentication
  audit: AuditSink
  /** the keyed hash new keys are stored under, and its data key's id */
  hasher: { id: string, hash: KeyedHash }
  settings: { maxTtl: number, maxPerUser: number, defaultRoles: string[] }
}

const iso = (ms: number) => new Date(ms).toISOString()

/** `<slug>.<first 8 of id>@service.invalid`: a reserved domain (RFC 2606), so no mail can ever reach it. */
export function serviceEmail (name: string, id: string): string {
  const slug = name.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '')
  return `${slug === '' ? 'service' : slug}.${id.slice(0, 8)}@service.invalid`
}

/** API keys and service accounts (docs/api-keys.md): creation, listing, revocation. Checking a key is ApiKeyVerifier's. */
export class ApiKeyService {
  constructor (private readonly options: ApiKeyServiceOptions) {}

  /** POST /api/auth/api-keys: the caller's own key, after recent authentication. */
  async createOwn (caller: Claims, input: NewApiKey & { password?: string | undefined }, context: RequestContext): Promise<{ key: ApiKey, secret: string }> {
    await this.options.recentAuth.require(caller, input.password, context)
    return await this.create(caller.user_id, input, { actorId: caller.user_id, context }, false)
  }

  /** POST /api/users/:id/api-keys and the CLI: a service account's key. */
  async createFor (userId: string, input: NewApiKey, requester: KeyRequester): Promise<{ key: ApiKey, secret: string }> {
    return await this.create(userId, input, requester, true)
  }

  async list (userId: string): Promise<ApiKey[]> {
    return await this.options.store.apiKeys.listLive(userId, iso(Date.now()))
  }

  /** Another user's key, an ended one and an unknown id are all not_found. `userId` undefined: any owner (the CLI). */
  async revoke (keyId: string, userId: string | undefined, reason: string, requester: KeyRequester): Promise<void> {
    const revoked = await this.options.sessions.revokeKeys({ keyId, userId }, { reason, actorId: requester.actorId }, requester.context)
    if (revoked === 0) throw new NotFound('API key not found')
  }

  /** A user of kind `service`: no password (the empty hash matches none), never a superuser, never mailed. */
  async createServiceAccount (name: string, roles: string[] | undefined, requester: KeyRequester): Promise<User> {
    const id = randomUUID()
    const user = await this.options.store.users.create({
      id, email: serviceEmail(name, id), name, age: null, passwordHash: '', roles: roles ?? this.options.settings.defaultRoles, isSuperuser: false, kind: 'service'
    }, iso(Date.now()))
    if (user === undefined) throw new EmailTaken()
    this.options.audit({ event: 'service_account_created', actorId: requester.actorId, userId: user.id, detail: `roles: [${user.roles.join(',')}]` }, requester.context)
    return user
  }

  private expiryOf (expiresAt: string | undefined, nowMs: number): number {
    const latest = nowMs + this.options.settings.maxTtl * 1000
    if (expiresAt === undefined) return latest
    const at = Date.parse(expiresAt)
    if (!(at > nowMs)) throw new ValidationFailed({ expires_at: ['The expires_at field must be a time in the future'] })
    if (at > latest) throw new ValidationFailed({ expires_at: [`The expires_at field must not exceed ${iso(latest)}`] })
    return at
  }

  /**
   * In one transaction that reads the owner first (FOR UPDATE on PostgreSQL): a concurrent role
   * removal either sees the key and revokes it, or the key sees the roles already gone.
   */
  private async create (userId: string, input: NewApiKey, requester: KeyRequester, serviceOnly: boolean): Promise<{ key: ApiKey, secret: string }> {
    const nowMs = Date.now()
    const expiresAtMs = this.expiryOf(input.expiresAt, nowMs)
    const { id, key: secret } = generateKey()
    const key = await this.options.store.transaction(async (tx) => {
      const owner = await tx.users.findById(userId)
      if (owner === undefined) throw new NotFound('User not found')
      if (serviceOnly && owner.kind !== 'service') throw new NotServiceAccount()
      const roles = input.roles ?? owner.roles
      const missing = roles.filter((role) => !owner.roles.includes(role))
      if (missing.length > 0) throw new Forbidden('missing_role', missing)
      if (await tx.apiKeys.countLive(userId, iso(nowMs)) >= this.options.settings.maxPerUser) throw new TooManyApiKeys()
      const row = {
        id, userId, name: input.name, roles, secretHash: this.options.hasher.hash.of(secret), hashKeyId: this.options.hasher.id, createdAt: iso(nowMs), expiresAt: iso(expiresAtMs)
      }
      await tx.apiKeys.create(row)
      return { ...row, lastUsedAt: null, revokedAt: null }
    })
    this.options.audit({ event: 'api_key_created', actorId: requester.actorId, userId, detail: `key ${id} ${JSON.stringify(key.name)}; roles: [${key.roles.join(',')}]; expires ${key.expiresAt}` }, requester.context)
    return { key, secret }
  }
}
