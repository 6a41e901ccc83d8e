import { randomUUID } from 'node:crypto'
import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import type { User, UserChanges, UserKind } from '../db/users.js'
import { EmailTaken, Forbidden, NotFound, ValidationFailed } from '../errors.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService } from '../sessions/session-service.js'
import type { Claims } from '../tokens/claims.js'

export interface NewAccount {
  email: string
  password: string
  name: string
  age?: number | undefined
  roles: string[]
  isSuperuser: boolean
}

export interface UserPage { users: User[], total: number }

export function normalizeEmail (email: string): string {
  return email.trim().toLowerCase()
}

export function assertMayGrant (caller: Claims, changes: { roles?: string[] | undefined, isSuperuser?: boolean | undefined }): void {
  const admin = caller.is_superuser || caller.roles.includes('admin')
  if (changes.roles !== undefined && !admin) throw new Forbidden('missing_role', ['admin'])
  if (changes.isSuperuser !== undefined && !caller.is_superuser) throw new Forbidden('superuser_required')
}

/** The command line's operator has every power: whoever can run it can already write the database. */
export interface Actor { user_id?: string | undefined, is_superuser: boolean }

export const OPERATOR: Actor = { is_superuser: true }

export interface Requester { actorId?: string | undefined, context: RequestContext }

const listed = (roles: string[]) => `[${roles.join(',')}]`

function grantChanges (before: User, after: User): string | undefined {
  const changes: string[] = []
  if (listed(before.roles) !== listed(after.roles)) changes.push(`roles: ${listed(before.roles)} -> ${listed(after.roles)}`)
  if (before.isSuperuser !== after.isSuperuser) changes.push(`is_superuser: ${before.isSuperuser} -> ${after.isSuperuser}`)
  return changes.length === 0 ? undefined : changes.join('; ')
}

/** A grant taken away ends the user's sessions, so no token keeps the old claims. */
function losesGrant (before: User, after: UserChanges): boolean {
  if (after.isSuperuser === false && before.isSuperuser) return true
  return after.roles !== undefined && before.roles.some((role) => !after.roles?.includes(role))
}

export class UserService {
  constructor (
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly audit: AuditSink
  ) {}

  /** Every caller creates accounts here; the unique email index decides a race (email_taken). */
  async create (account: NewAccount, requester?: Requester): Promise<User> {
    const user = await this.store.users.create({
      id: randomUUID(),
      email: normalizeEmail(account.email),
      name: account.name,
      age: account.age ?? null,
      passwordHash: await this.hasher.hash(account.password),
      roles: account.roles,
      isSuperuser: account.isSuperuser
    }, new Date().toISOString())
    if (user === undefined) throw new EmailTaken()
    if (requester !== undefined) {
      const detail = `roles: ${listed(user.roles)}; is_superuser: ${user.isSuperuser}`
      this.audit({ event: 'user_created', actorId: requester.actorId, userId: user.id, detail }, requester.context)
    }
    return user
  }

  async findById (id: string): Promise<User | undefined> {
    return await this.store.users.findById(id)
  }

  async findByEmail (email: string): Promise<User | undefined> {
    return await this.store.users.findByEmail(normalizeEmail(email))
  }

  /** The hash is made before the transaction opens. */
  async setPassword (id: string, password: string, requester: Requester): Promise<number> {
    const passwordHash = await this.hasher.hash(password)
    const revoked = await this.store.transaction(async (tx) => {
      if (await tx.users.findById(id) === undefined) throw new NotFound('User not found')
      await tx.users.setPasswordHash(id, passwordHash, new Date().toISOString())
      return await this.sessions.revoke({ userId: id }, { reason: 'password_set', actorId: requester.actorId }, requester.context, tx)
    })
    this.audit({ event: 'password_changed', actorId: requester.actorId, userId: id, detail: 'set without the current password' }, requester.context)
    return revoked
  }

  async list (page: number, perPage: number, kind?: UserKind): Promise<UserPage> {
    const [users, total] = await Promise.all([
      this.store.users.list(perPage, (page - 1) * perPage, kind),
      this.store.users.count(kind)
    ])
    return { users, total }
  }

  /** Only a superuser may change a superuser's grants: an admin cannot demote the one above it. */
  async update (id: string, changes: UserChanges, caller: Actor, context: RequestContext): Promise<User> {
    const actorId = caller.user_id
    const [before, after] = await this.store.transaction(async (tx) => {
      const before = await tx.users.findById(id)
      if (before === undefined) throw new NotFound('User not found')
      if (before.isSuperuser && !caller.is_superuser && changes.roles !== undefined) throw new Forbidden('superuser_required')
      if (before.kind === 'service' && changes.isSuperuser === true) throw new ValidationFailed({ is_superuser: ['The is_superuser field is invalid'] })
      const lost = losesGrant(before, changes)
      const after = await tx.users.update(id, changes, new Date().toISOString(), lost)
      if (after === undefined) throw new NotFound('User not found')
      if (lost) {
        await this.sessions.revoke({ userId: id }, { reason: 'grant_removed', actorId }, context, tx)
        // a key holding a role the owner lost ends too; the others keep working
        await this.sessions.revokeKeys({ userId: id, holdingAny: before.roles.filter((r) => !after.roles.includes(r)) }, { reason: 'grant_removed', actorId }, context, tx)
      }
      return [before, after]
    })
    const detail = grantChanges(before, after)
    if (detail !== undefined) this.audit({ event: 'grants_changed', actorId, userId: id, detail }, context)
    return after
  }

  async delete (id: string, caller: Actor, context: RequestContext): Promise<void> {
    await this.store.transaction(async (tx) => {
      const user = await tx.users.findById(id)
      if (user === undefined) throw new NotFound('User not found')
      if (user.isSuperuser && !caller.is_superuser) throw new Forbidden('superuser_required')
      await this.sessions.revoke({ userId: id }, { reason: 'user_deleted', actorId: caller.user_id }, context, tx)
      await this.sessions.revokeKeys({ userId: id }, { reason: 'user_deleted', actorId: caller.user_id }, context, tx)
      await tx.users.delete(id)
    })
    this.audit({ event: 'user_deleted', actorId: caller.user_id, userId: id }, context)
  }

  /**
   * The unique email lets exactly one starting process win. An ordinary account holding the
   * address is never promoted: whoever registered it must not get the operator's powers.
   */
  async bootstrapAdmin (email: string, password: string): Promise<'created' | 'exists' | 'taken'> {
    const existing = await this.store.users.findByEmail(normalizeEmail(email))
    if (existing !== undefined) return existing.isSuperuser ? 'exists' : 'taken'
    try {
      await this.create({ email, password, name: 'Administrator', roles: ['admin'], isSuperuser: true })
      return 'created'
    } catch (err) {
      if (!(err instanceof EmailTaken)) throw err
      // another instance won the race, or someone registered the address meanwhile
      const winner = await this.store.users.findByEmail(normalizeEmail(email))
      return winner?.isSuperuser === false ? 'taken' : 'exists'
    }
  }
}
