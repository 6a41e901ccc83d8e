import type { Passkey } from '../../schemas/passkeys.js'
import type { Credentials, Remover } from '../accounts/credentials.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { StoredPasskey } from '../db/passkeys.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { NotFound } from '../errors.js'
import { securityNoticeMail } from '../mail/templates.js'

export interface PasskeyListOptions {
  store: Store
  audit: AuditSink
  /** the last-credential rule */
  credentials: Credentials
  notify: boolean
  queued: () => void
  clock: () => number
}

/** A user's passkeys: listed, renamed, removed. Removing one revokes no session. */
export class PasskeyList {
  constructor (private readonly listOptions: PasskeyListOptions) {}

  /** Newest first. */
  async list (userId: string): Promise<Passkey[]> {
    return (await this.listOptions.store.passkeys.listOf(userId)).map((p) => this.view(p))
  }

  /** Unknown, or another user's: 404, one answer. */
  async rename (userId: string, id: string, name: string): Promise<Passkey> {
    const { store } = this.listOptions
    if (!await store.passkeys.rename(userId, id, name)) throw new NotFound('Passkey not found')
    const passkey = await store.passkeys.find(id)
    if (passkey === undefined) throw new NotFound('Passkey not found')
    return this.view(passkey)
  }

  /** The user keeps their last credential (src/accounts/credentials.ts): 409 last_credential, unless an admin removes it. */
  async remove (userId: string, id: string, by: Remover, context: RequestContext): Promise<void> {
    const { store } = this.listOptions
    const removed = await store.transaction(async (tx) => {
      await tx.passkeys.lockUser(userId)
      const user = await tx.users.findById(userId)
      const passkey = user === undefined ? undefined : await tx.passkeys.find(id)
      if (user === undefined || passkey?.userId !== userId) throw new NotFound('Passkey not found')
      await this.listOptions.credentials.keepLast(tx, user, { passkey: id }, by)
      await tx.passkeys.remove(userId, id)
      await this.notice(tx, user, `A passkey ("${passkey.name}") was removed from your account.`)
      return passkey
    })
    this.mailQueued()
    this.listOptions.audit({ event: 'passkey_removed', actorId: by.actorId, userId, detail: removed.id }, context)
  }

  protected view (passkey: StoredPasskey): Passkey {
    return {
      id: passkey.id,
      name: passkey.name,
      created_at: passkey.createdAt,
      last_used_at: passkey.lastUsedAt,
      aaguid: passkey.aaguid,
      transports: passkey.transports,
      backup_eligible: passkey.backupEligible,
      backed_up: passkey.backedUp
    }
  }

  protected async notice (tx: Store, user: User, what: string): Promise<void> {
    if (this.listOptions.notify) await tx.mailOutbox.enqueue(securityNoticeMail({ to: user.email, what }))
  }

  protected mailQueued (): void {
    if (this.listOptions.notify) this.listOptions.queued()
  }
}
