import type { Kysely } from 'kysely'
import type { Database, SigningKeyRow } from './schema.js'

/** A stored signing key, camelCased; times are RFC 3339 strings. */
export interface StoredSigningKey {
  kid: string
  seq: number
  alg: string
  publicJwk: string
  /** sealed (src/crypto/envelope.ts) */
  privateKey: string
  createdAt: string
  activatesAt: string
  retiresAt: string | null
  revokedAt: string | null
}

function toKey (row: SigningKeyRow): StoredSigningKey {
  return {
    kid: row.kid,
    seq: Number(row.seq),
    alg: row.alg,
    publicJwk: row.public_jwk,
    privateKey: row.private_key,
    createdAt: row.created_at,
    activatesAt: row.activates_at,
    retiresAt: row.retires_at,
    revokedAt: row.revoked_at
  }
}

export class SigningKeyRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async list (): Promise<StoredSigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('seq').execute()
    return rows.map(toKey)
  }

  /** False when another instance took this `seq` first (it rotated at the same moment). */
  async insert (key: StoredSigningKey): Promise<boolean> {
    const result = await this.db.insertInto('signing_keys')
      .values({
        kid: key.kid,
        seq: key.seq,
        alg: key.alg,
        public_jwk: key.publicJwk,
        private_key: key.privateKey,
        created_at: key.createdAt,
        activates_at: key.activatesAt,
        retires_at: key.retiresAt,
        revoked_at: key.revokedAt
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  async update (kid: string, times: { activatesAt?: string, retiresAt?: string | null, revokedAt?: string }): Promise<void> {
    await this.db.updateTable('signing_keys')
      .set({
        ...(times.activatesAt !== undefined && { activates_at: times.activatesAt }),
        ...(times.retiresAt !== undefined && { retires_at: times.retiresAt }),
        ...(times.revokedAt !== undefined && { revoked_at: times.revokedAt })
      })
      .where('kid', '=', kid)
      .execute()
  }
}
