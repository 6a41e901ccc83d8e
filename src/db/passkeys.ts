import type { Kysely, Selectable } from 'kysely'
import type { PasskeysTable } from './feature-tables.js'
import type { Database } from './schema.js'

export interface StoredPasskey {
  /** the credential ID, base64url */
  id: string
  userId: string
  name: string
  /** the COSE public key, base64url */
  publicKey: string
  signCount: number
  backupEligible: boolean
  backedUp: boolean
  transports: string[]
  aaguid: string
  createdAt: string
  lastUsedAt: string | null
}

export interface PasskeyUse { id: string, fromCount: number, toCount: number, backedUp: boolean, now: string }

function passkeyOf (row: Selectable<PasskeysTable>): StoredPasskey {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    publicKey: row.public_key,
    signCount: Number(row.sign_count),
    backupEligible: row.backup_eligible === 1,
    backedUp: row.backed_up === 1,
    transports: JSON.parse(row.transports) as string[],
    aaguid: row.aaguid,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at
  }
}

/** Passkeys and their users' WebAuthn handles (SPEC §14.2's tables); deleted with the user. */
export class PasskeyRepository {
  constructor (private readonly db: Kysely<Database>, private readonly lockUsers = false) {}

  async find (id: string): Promise<StoredPasskey | undefined> {
    const row = await this.db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst()
    return row && passkeyOf(row)
  }

  /** The passkey with its user's handle, in one read (a sign-in needs both). */
  async findWithHandle (id: string): Promise<{ passkey: StoredPasskey, handle: string } | undefined> {
    const row = await this.db.selectFrom('passkeys')
      .innerJoin('webauthn_user_handles', 'webauthn_user_handles.user_id', 'passkeys.user_id')
      .selectAll('passkeys').select('webauthn_user_handles.handle')
      .where('passkeys.id', '=', id).executeTakeFirst()
    return row && { passkey: passkeyOf(row), handle: row.handle }
  }

  /** Newest first; ties (one millisecond) by id, so the order is stable. */
  async listOf (userId: string): Promise<StoredPasskey[]> {
    const rows = await this.db.selectFrom('passkeys').selectAll().where('user_id', '=', userId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    return rows.map(passkeyOf)
  }

  async countOf (userId: string): Promise<number> {
    const row = await this.db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirst()
    return Number(row?.n ?? 0)
  }

  /**
   * Inside the registration's transaction; on PostgreSQL the user row is locked first, so two
   * registrations at once cannot both pass the count.
   */
  async lockUser (userId: string): Promise<void> {
    if (this.lockUsers) await this.db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute()
  }

  /** False when the credential ID is registered already (two registrations of one credential at once: one wins). */
  async insert (passkey: StoredPasskey): Promise<boolean> {
    const result = await this.db.insertInto('passkeys').values({
      id: passkey.id,
      user_id: passkey.userId,
      name: passkey.name,
      public_key: passkey.publicKey,
      sign_count: passkey.signCount,
      backup_eligible: passkey.backupEligible ? 1 : 0,
      backed_up: passkey.backedUp ? 1 : 0,
      transports: JSON.stringify(passkey.transports),
      aaguid: passkey.aaguid,
      created_at: passkey.createdAt,
      last_used_at: passkey.lastUsedAt
    }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  /** Only over the count read: of two uses with one count, one records. */
  async recordUse ({ id, fromCount, toCount, backedUp, now }: PasskeyUse): Promise<boolean> {
    const result = await this.db.updateTable('passkeys').set({ sign_count: toCount, backed_up: backedUp ? 1 : 0, last_used_at: now })
      .where('id', '=', id).where('sign_count', '=', fromCount).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async rename (userId: string, id: string, name: string): Promise<boolean> {
    const result = await this.db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async remove (userId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  async handleOf (userId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('webauthn_user_handles').select('handle').where('user_id', '=', userId).executeTakeFirst()
    return row?.handle
  }

  /** The user's handle, `candidate` if they had none (of two first registrations at once, one handle wins). */
  async ensureHandle (userId: string, candidate: string): Promise<string> {
    await this.db.insertInto('webauthn_user_handles').values({ user_id: userId, handle: candidate })
      .onConflict((oc) => oc.column('user_id').doNothing()).execute()
    const handle = await this.handleOf(userId)
    if (handle === undefined) throw new Error('the user is gone')
    return handle
  }
}
