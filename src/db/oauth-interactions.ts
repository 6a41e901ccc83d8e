import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export type InteractionPhase = 'login' | 'consent'

export interface Interaction {
  idHash: string
  clientId: string
  /** the checked authorization request, JSON */
  request: string
  phase: InteractionPhase
  sessionId: string | null
  createdAt: string
  expiresAt: string
}

export interface NewInteraction extends Interaction { keyId: string }

/** The pending steps of /oauth2/authorize: found by the keyed hash of their id, spent by one conditional update. */
export class OauthInteractionRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async create (interaction: NewInteraction): Promise<void> {
    const { idHash, keyId, clientId, request, phase, sessionId, createdAt, expiresAt } = interaction
    // the spent and the expired go as new ones come: none is worth anything after its ten minutes
    await this.db.deleteFrom('oauth_interactions').where('expires_at', '<=', createdAt).execute()
    await this.db.insertInto('oauth_interactions').values({
      id_hash: idHash, key_id: keyId, client_id: clientId, request, phase, session_id: sessionId, created_at: createdAt, expires_at: expiresAt, spent_at: null
    }).execute()
  }

  async findLive (idHashes: string[], now: string): Promise<Interaction | undefined> {
    if (idHashes.length === 0) return undefined
    const row = await this.db.selectFrom('oauth_interactions').selectAll()
      .where('id_hash', 'in', idHashes).where('spent_at', 'is', null).where('expires_at', '>', now)
      .executeTakeFirst()
    if (row === undefined) return undefined
    return {
      idHash: row.id_hash,
      clientId: row.client_id,
      request: row.request,
      phase: row.phase as InteractionPhase,
      sessionId: row.session_id,
      createdAt: row.created_at,
      expiresAt: row.expires_at
    }
  }

  /** Of concurrent uses exactly one spends it. */
  async spend (idHash: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('oauth_interactions').set({ spent_at: now })
      .where('id_hash', '=', idHash).where('spent_at', 'is', null).where('expires_at', '>', now)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}
