import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export interface AuthorizationCode {
  codeHash: string
  clientId: string
  userId: string
  /** the portal session the code was issued in */
  sessionId: string
  redirectUri: string
  codeChallenge: string
  nonce: string | null
  scopes: string[]
  createdAt: string
  expiresAt: string
}

export interface NewCode extends AuthorizationCode { keyId: string }

/** A spent code: the child session its first use created (null while that is still being made). */
export interface SpentCode { clientId: string, userId: string, childSessionId: string | null }

/** A spent code stays this long past its expiry, so a replay can still be recognised and punished. */
const KEEP_SPENT_MS = 60 * 60 * 1000

function toCode (row: Database['oauth_codes']): AuthorizationCode {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    userId: row.user_id,
    sessionId: row.session_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    nonce: row.nonce,
    scopes: row.scopes === '' ? [] : row.scopes.split(' '),
    createdAt: row.created_at,
    expiresAt: row.expires_at
  }
}

/** Authorization codes (hashes only): single use by one conditional update that also names the child session. */
export class OauthCodeRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async create (code: NewCode): Promise<void> {
    const cutoff = new Date(Date.parse(code.createdAt) - KEEP_SPENT_MS).toISOString()
    await this.db.deleteFrom('oauth_codes').where('expires_at', '<=', cutoff).execute()
    await this.db.insertInto('oauth_codes').values({
      code_hash: code.codeHash,
      key_id: code.keyId,
      client_id: code.clientId,
      user_id: code.userId,
      session_id: code.sessionId,
      redirect_uri: code.redirectUri,
      code_challenge: code.codeChallenge,
      nonce: code.nonce,
      scopes: code.scopes.join(' '),
      created_at: code.createdAt,
      expires_at: code.expiresAt,
      spent_at: null,
      child_session_id: null,
      replayed_at: null
    }).execute()
  }

  /** Spends a live code, naming the child session its use creates; undefined when none of the hashes is live. */
  async spend (codeHashes: string[], childSessionId: string, now: string): Promise<AuthorizationCode | undefined> {
    if (codeHashes.length === 0) return undefined
    const row = await this.db.updateTable('oauth_codes').set({ spent_at: now, child_session_id: childSessionId })
      .where('code_hash', 'in', codeHashes).where('spent_at', 'is', null).where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : toCode(row)
  }

  /** A spent code presented again: marked, so a first use still making its session ends it too. */
  async markReplayed (codeHashes: string[], now: string): Promise<SpentCode | undefined> {
    if (codeHashes.length === 0) return undefined
    const row = await this.db.updateTable('oauth_codes').set({ replayed_at: now })
      .where('code_hash', 'in', codeHashes).where('spent_at', 'is not', null)
      .returning(['client_id', 'user_id', 'child_session_id'])
      .executeTakeFirst()
    return row === undefined ? undefined : { clientId: row.client_id, userId: row.user_id, childSessionId: row.child_session_id }
  }

  async wasReplayed (codeHash: string): Promise<boolean> {
    const row = await this.db.selectFrom('oauth_codes').select('replayed_at').where('code_hash', '=', codeHash).executeTakeFirst()
    return row?.replayed_at != null
  }
}
