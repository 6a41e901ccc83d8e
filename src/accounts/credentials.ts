import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { LastCredential } from '../errors.js'

/** Who removes a credential: the user themself (their last one is kept), or an admin (it is not: the user recovers by a reset). */
export interface Remover { actorId: string | undefined, admin: boolean }

/** The credential a removal takes away. */
export type Removal = { passkey: string } | { identity: string }

/** Which stored credentials can sign in now. */
export interface CredentialKinds {
  /** ENABLE_PASSKEYS: while it is off, a stored passkey signs nobody in */
  passkeys: boolean
  /** the ids of IDP_PROVIDERS_FILE's providers (none while ENABLE_IDP_LOGIN is off): an identity of another provider signs nobody in */
  providers: readonly string[]
}

/** A password is one of the user's credentials only as a non-empty hash (an identity provider's sign-up, an import without one: none). */
export const hasPassword = (user: User): boolean => user.passwordHash !== ''

/**
 * The last-credential rule (docs/identity-providers.md#removing-a-way-to-sign-in): a user's
 * credentials are their password (a non-empty hash), their passkeys and their linked identities,
 * counted only while they can sign in. A user may not remove the last one themself (409
 * last_credential); an admin may. Every removal of a passkey or an identity asks here, inside its
 * transaction, with the user read there (locked on PostgreSQL), so two removals at once cannot take
 * the last two.
 */
export class Credentials {
  private readonly providers: ReadonlySet<string>

  constructor (private readonly kinds: CredentialKinds) {
    this.providers = new Set(kinds.providers)
  }

  /** How many ways to sign in `user` keeps once `removal` is gone (the removed credential is theirs: the caller found it). */
  async remaining (tx: Store, user: User, removal: Removal): Promise<number> {
    const password = hasPassword(user) ? 1 : 0
    const passkeys = this.kinds.passkeys ? await tx.passkeys.countOf(user.id) - ('passkey' in removal ? 1 : 0) : 0
    const identities = (await tx.identities.listOf(user.id))
      .filter((identity) => this.providers.has(identity.provider) && !('identity' in removal && removal.identity === identity.id))
    return password + passkeys + identities.length
  }

  /** 409 last_credential when the user themself would be left without a way to sign in; an admin passes. */
  async keepLast (tx: Store, user: User, removal: Removal, by: Remover): Promise<void> {
    if (!by.admin && await this.remaining(tx, user, removal) < 1) throw new LastCredential()
  }
}
