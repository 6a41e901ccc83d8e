import { sql, type Kysely } from 'kysely'
import type { Database, SessionRow } from './schema.js'

export interface Session {
  id: string
  userId: string
  refreshJti: string
  /** re-signing it reproduces the token */
  refreshClaims: string
  previousJti: string | null
  rotatedAt: string | null
  createdAt: string
  signedInAt: string
  expiresAt: string
  /** the latest `exp` of an access token issued for this session: no token of it lives longer */
  accessExpiresAt: string
  revokedAt: string | null
  ip: string | null
  userAgent: string | null
  lastUsedAt: string
  /** set on an OpenID Connect client's child session */
  clientId: string | null
  parentSessionId: string | null
}

export type NewSession = Pick<Session, 'id' | 'userId' | 'refreshJti' | 'refreshClaims' | 'createdAt' | 'signedInAt' | 'expiresAt' | 'accessExpiresAt' | 'ip' | 'userAgent'> &
  Partial<Pick<Session, 'clientId' | 'parentSessionId'>>

function toSession (row: SessionRow): Session {
  return {
    id: row.id,
    userId: row.user_id,
    refreshJti: row.refresh_jti,
    refreshClaims: row.refresh_claims,
    previousJti: row.previous_jti,
    rotatedAt: row.rotated_at,
    createdAt: row.created_at,
    signedInAt: row.signed_in_at,
    expiresAt: row.expires_at,
    accessExpiresAt: row.access_expires_at,
    revokedAt: row.revoked_at,
    ip: row.ip,
    userAgent: row.user_agent,
    lastUsedAt: row.last_used_at,
    clientId: row.client_id ?? null,
    parentSessionId: row.parent_session_id ?? null
  }
}

export interface Rotation {
  sessionId: string
  fromJti: string
  toJti: string
  refreshClaims: string
  now: string
  expiresAt: string
  accessExpiresAt: string
  ip: string | null
  userAgent: string | null
}

export type RevocationTarget =
  | { sessionId: string, userId?: string }
  | { userId: string, exceptSessionId?: string }
  /** the user's live sessions but the `keepNewest` newest (a sign-in past SESSIONS_MAX_PER_USER) */
  | { userId: string, keepNewest: number }
  /** an OpenID Connect client's child sessions (of one user, when given) */
  | { clientId: string, userId?: string }

export interface RevokedSession {
  sessionId: string
  userId: string
  revocationExpiresAt: string
}

/** The later of the stored latest access `exp` and a new one: a token issued before may outlive the new one. */
function latestAccess (accessExpiresAt: string) {
  return sql<string>`case when access_expires_at > ${accessExpiresAt} then access_expires_at else ${accessExpiresAt} end`
}

export class SessionRepository {
  constructor (private readonly db: Kysely<Database>, private readonly lockUsers = false) {}

  /**
   * Inserted only while the credentials version is the one the sign-in checked. On PostgreSQL the
   * user row is read FOR SHARE, so the insert waits for a change still in its transaction. A child
   * session is inserted only while its parent is live.
   */
  async create (session: NewSession, credentialsVersion: number): Promise<boolean> {
    let source = this.db.selectFrom('users')
      .select((eb) => [
        eb.val(session.id).as('id'),
        'users.id as user_id',
        eb.val(session.refreshJti).as('refresh_jti'),
        eb.val(session.refreshClaims).as('refresh_claims'),
        eb.val(session.createdAt).as('created_at'),
        eb.val(session.signedInAt).as('signed_in_at'),
        eb.val(session.expiresAt).as('expires_at'),
        eb.val(session.accessExpiresAt).as('access_expires_at'),
        eb.val(session.ip).as('ip'),
        eb.val(session.userAgent).as('user_agent'),
        eb.val(session.createdAt).as('last_used_at'),
        eb.val(session.clientId ?? null).as('client_id'),
        eb.val(session.parentSessionId ?? null).as('parent_session_id')
      ])
      .where('users.id', '=', session.userId)
      .where('users.credentials_version', '=', credentialsVersion)
    const parent = session.parentSessionId
    if (parent != null) {
      source = source.where((eb) => eb.exists(eb.selectFrom('sessions as parent').select('parent.id').where('parent.id', '=', parent).where('parent.revoked_at', 'is', null)))
    }
    if (this.lockUsers) source = source.forShare()
    const result = await this.db.insertInto('sessions')
      .columns(['id', 'user_id', 'refresh_jti', 'refresh_claims', 'created_at', 'signed_in_at', 'expires_at', 'access_expires_at', 'ip', 'user_agent', 'last_used_at', 'client_id', 'parent_session_id'])
      .expression(source)
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
  }

  async findById (id: string): Promise<Session | undefined> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toSession(row)
  }

  /** Compare-and-set on the jti: of two refreshes racing with one token exactly one rotates. */
  async rotate ({ sessionId, fromJti, toJti, refreshClaims, now, expiresAt, accessExpiresAt, ip, userAgent }: Rotation): Promise<boolean> {
    const result = await this.db.updateTable('sessions')
      .set({
        refresh_jti: toJti,
        refresh_claims: refreshClaims,
        previous_jti: fromJti,
        rotated_at: now,
        expires_at: expiresAt,
        access_expires_at: latestAccess(accessExpiresAt),
        ip,
        user_agent: userAgent,
        last_used_at: now
      })
      .where('id', '=', sessionId)
      .where('refresh_jti', '=', fromJti)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async recordAccess (sessionId: string, accessExpiresAt: string): Promise<boolean> {
    const result = await this.db.updateTable('sessions')
      .set({ access_expires_at: latestAccess(accessExpiresAt) })
      .where('id', '=', sessionId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async revoke (target: RevocationTarget, reason: string, now: string, marginMs: number): Promise<RevokedSession[]> {
    const run = async (trx: Kysely<Database>) => {
      let query = trx.updateTable('sessions').set({ revoked_at: now }).where('revoked_at', 'is', null)
      if ('sessionId' in target) {
        query = query.where('id', '=', target.sessionId)
        if (target.userId !== undefined) query = query.where('user_id', '=', target.userId)
      } else if ('clientId' in target) {
        query = query.where('client_id', '=', target.clientId)
        if (target.userId !== undefined) query = query.where('user_id', '=', target.userId)
      } else if ('keepNewest' in target) {
        // one statement, so concurrent sign-ins cannot each keep a different set
        const newest = trx.selectFrom('sessions').select('id')
          .where('user_id', '=', target.userId).where('revoked_at', 'is', null).where('expires_at', '>', now)
          .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(target.keepNewest)
        query = query.where('user_id', '=', target.userId).where('expires_at', '>', now).where('id', 'not in', newest)
      } else {
        query = query.where('user_id', '=', target.userId)
        if (target.exceptSessionId !== undefined) query = query.where('id', '!=', target.exceptSessionId)
      }
      const rows = await query.returning(['id', 'user_id', 'access_expires_at']).execute()
      if (rows.length === 0) return []
      const revoked = rows.map((r) => ({
        sessionId: r.id,
        userId: r.user_id,
        revocationExpiresAt: new Date(Date.parse(r.access_expires_at) + marginMs).toISOString()
      }))
      await trx.insertInto('revocations')
        .values(revoked.map((r) => ({ session_id: r.sessionId, user_id: r.userId, reason, revoked_at: now, expires_at: r.revocationExpiresAt })))
        .onConflict((oc) => oc.column('session_id').doNothing())
        .execute()
      return revoked
    }
    return this.db.isTransaction ? await run(this.db) : await this.db.transaction().execute(run)
  }

  /**
   * Whether the user holds more than `keep` live sessions: one read, no write. A sign-in asks it
   * after its own insert, so of sign-ins at once the last to ask sees every one of them.
   */
  async holdsMoreThan (userId: string, keep: number, now: string): Promise<boolean> {
    const row = await this.db.selectFrom('sessions').select('id')
      .where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .limit(1).offset(keep).executeTakeFirst()
    return row !== undefined
  }

  async listLive (userId: string, now: string): Promise<Session[]> {
    const rows = await this.db.selectFrom('sessions').selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
    return rows.map(toSession)
  }

  async deleteExpired (now: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute()
  }
}
