import type { Identity } from '../../schemas/identities.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { StoredIdentity } from '../db/identities.js'
import type { Store } from '../db/store.js'
import { NotFound } from '../errors.js'
import { securityNoticeMail } from '../mail/templates.js'
import type { Credentials, Remover } from './credentials.js'

export interface IdentityListOptions {
  store: Store
  audit: AuditSink
  /** the last-credential rule */
  credentials: Credentials
  /** IDP_PROVIDERS_FILE's providers, for their names */
  providers: ReadonlyArray<{ id: string, displayName: string }>
  /** whether mail is configured: disconnecting then queues a notice */
  notify: boolean
  queued: () => void
}

/**
 * A user's connected accounts at identity providers (docs/identity-providers.md#connected-accounts):
 * listed and disconnected. Linking is the sign-in flow's. Disconnecting one revokes no session, as
 * removing a passkey does not: the sessions list ends them.
 */
export class IdentityList {
  private readonly names: ReadonlyMap<string, string>

  constructor (private readonly options: IdentityListOptions) {
    this.names = new Map(options.providers.map((p) => [p.id, p.displayName]))
  }

  /** Oldest first. */
  async list (userId: string): Promise<Identity[]> {
    return (await this.options.store.identities.listOf(userId)).map((identity) => this.view(identity))
  }

  /** Unknown, or another user's: 404, one answer. The user keeps their last credential (409 last_credential); an admin may take it. */
  async remove (userId: string, id: string, by: Remover, context: RequestContext): Promise<void> {
    const { store, credentials, notify, audit } = this.options
    const removed = await store.transaction(async (tx) => {
      // read FOR UPDATE on PostgreSQL: a passkey's removal at the same moment waits for this one
      const user = await tx.users.findById(userId)
      const identity = user === undefined ? undefined : await tx.identities.find(id)
      if (user === undefined || identity?.userId !== userId) throw new NotFound('Identity not found')
      await credentials.keepLast(tx, user, { identity: id }, by)
      await tx.identities.remove(userId, id)
      const what = `Your ${this.nameOf(identity.provider)} account was disconnected from your account: it no longer signs you in.`
      if (notify) await tx.mailOutbox.enqueue(securityNoticeMail({ to: user.email, what }))
      return identity
    })
    if (notify) this.options.queued()
    audit({ event: 'idp_unlinked', actorId: by.actorId, userId, detail: `idp:${removed.provider}` }, context)
  }

  /** The provider's display name; its id once it is no longer in the file. */
  nameOf (provider: string): string {
    return this.names.get(provider) ?? provider
  }

  private view (identity: StoredIdentity): Identity {
    return {
      id: identity.id,
      provider: identity.provider,
      display_name: this.nameOf(identity.provider),
      email: identity.email,
      created_at: identity.createdAt,
      last_login_at: identity.lastLoginAt
    }
  }
}
