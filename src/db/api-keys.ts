import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from './schema.js'

export interface ApiKey {
  id: string
  userId: string
  name: string
  roles: string[]
  secretHash: string
  hashKeyId: string
  createdAt: string
  expiresAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

/** A key with what the claims need of its owner, read in one query. */
export interface OwnedApiKey extends ApiKey { ownerEmail: string }

/** Which keys a revocation ends: one key (of one user, when given), or a user's keys (those holding one of `roles`, when given). */
export type ApiKeyTarget =
  | { keyId: string, userId?: string }
  | { userId: string, holdingAny?: string[] }

export interface RevokedApiKey { keyId: string, userId: string, revocationExpiresAt: string }

function toApiKey (row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    roles: JSON.parse(row.roles) as string[],
    secretHash: row.secret_hash,
    hashKeyId: row.hash_key_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at
  }
}

export class ApiKeyRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async create (key: Omit<ApiKey, 'lastUsedAt' | 'revokedAt'>): Promise<void> {
    await this.db.insertInto('api_keys').values({
      id: key.id,
      user_id: key.userId,
      name: key.name,
      roles: JSON.stringify(key.roles),
      secret_hash: key.secretHash,
      hash_key_id: key.hashKeyId,
      created_at: key.createdAt,
      expires_at: key.expiresAt,
      last_used_at: null,
      revoked_at: null
    }).execute()
  }

  /** The key and its owner's email; a key whose owner is gone is gone with it (cascade). */
  async findOwned (id: string): Promise<OwnedApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').innerJoin('users', 'users.id', 'api_keys.user_id')
      .selectAll('api_keys').select('users.email as owner_email')
      .where('api_keys.id', '=', id).executeTakeFirst()
    return row && { ...toApiKey(row), ownerEmail: row.owner_email }
  }

  /** Neither revoked nor expired, newest first. */
  async listLive (userId: string, now: string): Promise<ApiKey[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll()
      .where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .orderBy('created_at', 'desc').orderBy('id', 'desc')
      .execute()
    return rows.map(toApiKey)
  }

  async countLive (userId: string, now: string): Promise<number> {
    const row = await this.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number | string>().as('total'))
      .where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .executeTakeFirstOrThrow()
    return Number(row.total)
  }

  /**
   * Marks the keys revoked and records each in `revocations` (session_id = the key id) in one
   * transaction, so every instance learns of it by the revocation sequence. A key stays refused
   * until it would have expired anyway, plus the margin.
   */
  async revoke (target: ApiKeyTarget, reason: string, now: string, marginMs: number): Promise<RevokedApiKey[]> {
    const run = async (trx: Kysely<Database>) => {
      let query = trx.selectFrom('api_keys').select(['id', 'user_id', 'roles', 'expires_at'])
        .where('revoked_at', 'is', null).where('expires_at', '>', now)
      if ('keyId' in target) {
        query = query.where('id', '=', target.keyId)
        if (target.userId !== undefined) query = query.where('user_id', '=', target.userId)
      } else {
        query = query.where('user_id', '=', target.userId)
      }
      const lost = 'holdingAny' in target ? target.holdingAny : undefined
      const rows = (await query.execute()).filter((r) => lost === undefined || (JSON.parse(r.roles) as string[]).some((role) => lost.includes(role)))
      if (rows.length === 0) return []
      const ids = rows.map((r) => r.id)
      // the update's own condition decides a race between two revocations of one key
      const updated = await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', 'in', ids).where('revoked_at', 'is', null)
        .returning(['id', 'user_id', 'expires_at']).execute()
      if (updated.length === 0) return []
      const revoked = updated.map((r) => ({ keyId: r.id, userId: r.user_id, revocationExpiresAt: new Date(Date.parse(r.expires_at) + marginMs).toISOString() }))
      await trx.insertInto('revocations')
        .values(revoked.map((r) => ({ session_id: r.keyId, user_id: r.userId, reason, revoked_at: now, expires_at: r.revocationExpiresAt })))
        .onConflict((oc) => oc.column('session_id').doNothing())
        .execute()
      return revoked
    }
    return this.db.isTransaction ? await run(this.db) : await this.db.transaction().execute(run)
  }

  /** At most once per interval per key, whichever instance writes: the condition is in the update. */
  async touch (id: string, now: string, notSince: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', notSince)]))
      .execute()
  }
}
