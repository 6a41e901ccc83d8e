import type { OwnedApiKey } from '../db/api-keys.js'
import type { Claims } from '../tokens/claims.js'

/** An API key as the hot path holds it: the hash to compare, when it ends, and its claims built once. */
export interface KeyEntry {
  id: string
  hash: Buffer
  hashKeyId: string
  expiresAtMs: number
  revoked: boolean
  claims: Claims
  /** ms of the last last_used_at write this instance made (or read) */
  touchedAt: number
  /**
   * The key exactly as it last passed the keyed hash: presented again, it is compared with this in
   * constant time instead of hashing anew (an HMAC costs some 10 µs in Node, the whole rest of the
   * check 2). The verified-token cache of access tokens holds what passed in the same way.
   */
  verified: string | undefined
  /** ms of the last refusal of this key once ended: the sweep keeps an ended key refused since the previous sweep */
  refusedAt: number
}

const NO_AMR: string[] = []

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

/** The claims of an access token (docs/api-keys.md#using-a-key), never signed: they live in memory only. */
export function keyClaims (key: OwnedApiKey, issuer: string): Claims {
  return {
    user_id: key.userId,
    email: key.ownerEmail,
    roles: key.roles,
    session_id: key.id,
    is_superuser: false,
    type: 'access',
    sub: key.userId,
    iat: seconds(key.createdAt),
    exp: seconds(key.expiresAt),
    iss: issuer,
    jti: key.id,
    aal: 'aal1',
    amr: NO_AMR,
    auth_time: seconds(key.createdAt),
    kind: 'api_key',
    key_id: key.id
  }
}

/**
 * One copy of each owner's id and email and of each role list, however many keys share them: a
 * database read makes fresh strings per row, and ten thousand keys of a few owners would each hold
 * their own (docs/api-keys.md#speed). Bounded by the owners and role lists of the keys held.
 */
export class SharedValues {
  private readonly owners = new Map<string, { userId: string, email: string }>()
  private readonly roleLists = new Map<string, string[]>()

  key (key: OwnedApiKey): OwnedApiKey {
    let owner = this.owners.get(key.userId)
    if (owner === undefined || owner.email !== key.ownerEmail) {
      owner = { userId: key.userId, email: key.ownerEmail }
      this.owners.set(key.userId, owner)
    }
    const listed = key.roles.join(',')
    let roles = this.roleLists.get(listed)
    if (roles === undefined) {
      roles = key.roles
      this.roleLists.set(listed, roles)
    }
    return { ...key, userId: owner.userId, ownerEmail: owner.email, roles }
  }
}

export function entryOf (key: OwnedApiKey, issuer: string): KeyEntry {
  return {
    id: key.id,
    hash: Buffer.from(key.secretHash, 'base64url'),
    hashKeyId: key.hashKeyId,
    expiresAtMs: Date.parse(key.expiresAt),
    revoked: key.revokedAt !== null,
    claims: keyClaims(key, issuer),
    touchedAt: key.lastUsedAt === null ? 0 : Date.parse(key.lastUsedAt),
    verified: undefined,
    refusedAt: 0
  }
}
