import DataLoader from 'dataloader'
import { sql, type Kysely } from 'kysely'
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

/** A user an import writes: the old system's id, creation time and verified address are kept. */
export type ImportedUser = NewUser & Pick<User, 'createdAt' | 'emailVerified'>

/** Rows per insert: eleven parameters each stays far below SQLite's and PostgreSQL's limits. */
const IMPORT_CHUNK = 500

export interface UserChanges { name?: string, age?: number | null, roles?: string[], isSuperuser?: boolean }

/** A new user's row: a created user and an imported one are written alike. */
function rowOf (user: NewUser, createdAt: string, now: string) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    age: user.age,
    password_hash: user.passwordHash,
    roles: JSON.stringify(user.roles),
    is_superuser: user.isSuperuser ? 1 : 0,
    credentials_version: 0,
    ...(user.kind === 'service' && { kind: 'service' }),
    created_at: createdAt,
    updated_at: now
  }
}

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
      .values(rowOf(user, now, now))
      .onConflict((oc) => oc.column('email').doNothing())
      .returningAll()
      .executeTakeFirst()
    return row && toUser(row)
  }

  /** The ids inserted; a row whose email or id is taken (a concurrent writer) is skipped, not an error. */
  async insertMany (users: ImportedUser[], now: string): Promise<string[]> {
    const inserted: string[] = []
    for (let i = 0; i < users.length; i += IMPORT_CHUNK) {
      const rows = await this.db.insertInto('users')
        .values(users.slice(i, i + IMPORT_CHUNK).map((user) => ({ ...rowOf(user, user.createdAt, now), email_verified: user.emailVerified ? 1 : 0 })))
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .execute()
      inserted.push(...rows.map((row) => row.id))
    }
    return inserted
  }

  /** Which of these emails and ids some user already has (an import's uniqueness check). */
  async taken (emails: string[], ids: string[]): Promise<{ emails: Set<string>, ids: Set<string> }> {
    const found = { emails: new Set<string>(), ids: new Set<string>() }
    for (let i = 0; i < Math.max(emails.length, ids.length); i += IMPORT_CHUNK) {
      const [someEmails, someIds] = [emails.slice(i, i + IMPORT_CHUNK), ids.slice(i, i + IMPORT_CHUNK)]
      if (someEmails.length === 0 && someIds.length === 0) continue
      const rows = await this.db.selectFrom('users').select(['id', 'email'])
        .where((eb) => eb.or([...(someEmails.length > 0 ? [eb('email', 'in', someEmails)] : []), ...(someIds.length > 0 ? [eb('id', 'in', someIds)] : [])]))
        .execute()
      for (const row of rows) {
        found.emails.add(row.email)
        found.ids.add(row.id)
      }
    }
    return found
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

  /**
   * Users by the algorithm of their stored hash (the metrics gauge), counted in one grouped scan
   * by the hash's prefix; '' is a user with no password.
   */
  async countByPasswordHash (): Promise<Record<string, number>> {
    const algorithm = sql<string>`case
      when password_hash = '' then 'none'
      when substr(password_hash, 1, 10) = '$argon2id$' then 'argon2id'
      when substr(password_hash, 1, 9) = '$argon2i$' then 'argon2i'
      when substr(password_hash, 1, 9) = '$argon2d$' then 'argon2d'
      when substr(password_hash, 1, 3) = '$2a' or substr(password_hash, 1, 3) = '$2b' or substr(password_hash, 1, 3) = '$2y' then 'bcrypt'
      when substr(password_hash, 1, 8) = '$scrypt$' then 'scrypt'
      when substr(password_hash, 1, 15) = '$pbkdf2-sha256$' or substr(password_hash, 1, 14) = 'pbkdf2_sha256$' then 'pbkdf2_sha256'
      when substr(password_hash, 1, 15) = '$pbkdf2-sha512$' then 'pbkdf2_sha512'
      else 'other' end`
    const rows = await this.db.selectFrom('users')
      .select([algorithm.as('algorithm'), (eb) => eb.fn.countAll<number | string>().as('total')])
      .groupBy(algorithm)
      .execute()
    return Object.fromEntries(rows.map((row) => [row.algorithm, Number(row.total)]))
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
  async setPasswordHash (id: string, passwordHash: string, now: string, expected?: string): Promise<boolean> {
    if (expected !== undefined) {
      const swapped = await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: now })
        .where('id', '=', id).where('password_hash', '=', expected).executeTakeFirst()
      return swapped.numUpdatedRows > 0n
    }
    const result = await this.db.updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, updated_at: now, credentials_version: eb('credentials_version', '+', 1) }))
      .where('id', '=', id).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}
