import DataLoader from 'dataloader'
import type { Kysely } from 'kysely'
import type { Database, UserRow } from './schema.js'

/** `service`: a service account (docs/api-keys.md#service-accounts): no password, no sign-in */
export type UserKind = 'user' | 'service'

export interface User {
  id: string
  email: string
  name: string
  age: number | null
  passwordHash: string
  roles: string[]
  isSuperuser: boolean
  /** A sign-in stores its session only while the version it checked is still current. */
  credentialsVersion: number
  emailVerified: boolean
  kind: UserKind
  createdAt: string
  updatedAt: string
}

export type NewUser = Omit<User, 'createdAt' | 'updatedAt' | 'credentialsVersion' | 'emailVerified' | 'kind'> & { kind?: UserKind }

export interface UserChanges { name?: string, age?: number | null, roles?: string[], isSuperuser?: boolean }

function toUser (row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    age: row.age,
    passwordHash: row.password_hash,
    roles: JSON.parse(row.roles) as string[],
    isSuperuser: row.is_superuser === 1,
    credentialsVersion: row.credentials_version,
    emailVerified: row.email_verified === 1,
    kind: row.kind === 'service' ? 'service' : 'user',
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** Undefined while a transaction is open on the connection: the caller must queue like any query. */
export type ImmediateUserRows = (ids: string[]) => UserRow[] | undefined

const MAX_BATCH = 100

export class UserRepository {
  /**
   * Lookups by id in one event-loop turn share one `where id in (…)` query: per-query driver
   * overhead outweighs the read (docs/benchmarks.md). No cache: every batch reads committed rows.
   */
  private readonly byId: DataLoader<string, User | undefined> | undefined

  /**
   * PostgreSQL reads a user FOR UPDATE inside transactions, so two admins changing one user's
   * grants take turns and the second sees the first's result. SQLite has one writer at a time.
   */
  constructor (
    private readonly db: Kysely<Database>,
    private readonly lockInTransactions = false,
    private readonly immediateRows?: ImmediateUserRows
  ) {
    if (!db.isTransaction) this.byId = new DataLoader((ids) => this.findByIds(ids), { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: setImmediate })
  }

  /** `undefined` means the email was taken (also under a race). */
  async create (user: NewUser, now: string): Promise<User | undefined> {
    const row = await this.db.insertInto('users')
      .values({
        id: user.id,
        email: user.email,
        name: user.name,
        age: user.age,
        password_hash: user.passwordHash,
        roles: JSON.stringify(user.roles),
        is_superuser: user.isSuperuser ? 1 : 0,
        credentials_version: 0,
        ...(user.kind === 'service' && { kind: 'service' }),
        created_at: now,
        updated_at: now
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .returningAll()
      .executeTakeFirst()
    return row && toUser(row)
  }

  async findById (id: string): Promise<User | undefined> {
    if (this.byId !== undefined) return await this.byId.load(id)
    let query = this.db.selectFrom('users').selectAll().where('id', '=', id)
    if (this.lockInTransactions && this.db.isTransaction) query = query.forUpdate()
    const row = await query.executeTakeFirst()
    return row && toUser(row)
  }

  private async findByIds (ids: readonly string[]): Promise<Array<User | undefined>> {
    const unique = [...new Set(ids)]
    const rows = this.immediateRows?.(unique) ?? await this.db.selectFrom('users').selectAll().where('id', 'in', unique).execute()
    const byId = new Map(rows.map((row) => [row.id, row]))
    // an object per caller, even for the same id: none can change another's copy
    return ids.map((id) => { const row = byId.get(id); return row && toUser(row) })
  }

  async findByEmail (email: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
    return row && toUser(row)
  }

  /** `kind`: only users of that kind (`GET /api/users?kind=service`) */
  async list (limit: number, offset: number, kind?: UserKind): Promise<User[]> {
    let query = this.db.selectFrom('users').selectAll()
    if (kind !== undefined) query = query.where('kind', '=', kind)
    const rows = await query
      .orderBy('created_at', 'asc').orderBy('id', 'asc')
      .limit(limit).offset(offset)
      .execute()
    return rows.map(toUser)
  }

  async count (kind?: UserKind): Promise<number> {
    let query = this.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('total'))
    if (kind !== undefined) query = query.where('kind', '=', kind)
    const row = await query.executeTakeFirstOrThrow()
    return Number(row.total)
  }

  async update (id: string, changes: UserChanges, now: string, losesGrant = false): Promise<User | undefined> {
    const row = await this.db.updateTable('users')
      .set((eb) => ({
        updated_at: now,
        ...(losesGrant && { credentials_version: eb('credentials_version', '+', 1) }),
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.age !== undefined && { age: changes.age }),
        ...(changes.roles !== undefined && { roles: JSON.stringify(changes.roles) }),
        ...(changes.isSuperuser !== undefined && { is_superuser: changes.isSuperuser ? 1 : 0 })
      }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row && toUser(row)
  }

  async markEmailVerified (id: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ email_verified: 1, updated_at: now }).where('id', '=', id).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** A second factor turned on or off is a credentials change, as a new password is. */
  async bumpCredentialsVersion (id: string, now: string): Promise<void> {
    await this.db.updateTable('users')
      .set((eb) => ({ updated_at: now, credentials_version: eb('credentials_version', '+', 1) }))
      .where('id', '=', id).execute()
  }

  async delete (id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  /**
   * With `expected` (a rehash with today's parameters): a compare-and-set that keeps a hash
   * replaced meanwhile, and leaves the version alone since the password did not change.
   */
  async setPasswordHash (id: string, passwordHash: string, now: string, expected?: string): Promise<void> {
    if (expected !== undefined) {
      await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: now })
        .where('id', '=', id).where('password_hash', '=', expected).execute()
      return
    }
    await this.db.updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, updated_at: now, credentials_version: eb('credentials_version', '+', 1) }))
      .where('id', '=', id).execute()
  }
}
