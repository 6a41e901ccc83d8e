import { randomUUID } from 'node:crypto'
import type { AuditSink } from '../events.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { Store } from '../db/store.js'
import type { ImportedUser } from '../db/users.js'
import { ValidationFailed } from '../errors.js'
import type { Requester } from '../accounts/users.js'
import type { ValidateFunction } from 'ajv'
import type { BreachedCheck } from '../validation/index.js'
import { checkedLine, LineCheck, lineValidator, ownRules, type CheckedLine, type LineProblems, type Where } from './lines.js'

export interface ImportRun {
  users: unknown[]
  where: Where
  dryRun: boolean
  partial: boolean
  requester: Requester
}

export type LineResult = { index: number, id: string } | ({ index: number } & LineProblems)

export interface ImportOutcome { created: number, refused: number, results: LineResult[] }

export interface ImportServiceOptions {
  store: Store
  hasher: PasswordHasher
  audit: AuditSink
  defaultRoles: string[]
  /** VALIDATION_ERROR_DETAILS: refused lines carry `details` as a 422 does */
  withDetails: boolean
  /** BREACHED_PASSWORDS_FILE's list, which a line's plain `password` must not be in */
  breached?: BreachedCheck | undefined
}

/** Lines written per transaction with `partial`; without it, the whole import is one. */
const PARTIAL_BATCH = 1000
/** argon2id hashes of plain passwords in flight at once: libuv's pool does them, four at a time by default. */
const HASHING_CONCURRENCY = 4

const TAKEN = 'is already taken'

/**
 * `gatehouse user import` and POST /api/users/import (docs/migrating.md): every line checked
 * before anything is written, then one transaction for the import (or one per batch of
 * `partial`). A dry run answers from the same checks and writes nothing.
 */
export class ImportService {
  private validate: ValidateFunction | undefined

  constructor (private readonly options: ImportServiceOptions) {}

  async run (run: ImportRun): Promise<ImportOutcome> {
    const checks = await this.check(run)
    const accepted = checks.filter((c) => !c.refused)
    const refusedCount = checks.length - accepted.length
    if (run.dryRun || (refusedCount > 0 && !run.partial)) return outcome(checks, refusedCount === 0 || run.partial ? accepted.length : 0, new Map())
    const ids = new Map(accepted.map((c) => [c.index, checkedLine(c.line).id ?? randomUUID()]))
    for (let i = 0; i < accepted.length; i += PARTIAL_BATCH) {
      const batch = run.partial ? accepted.slice(i, i + PARTIAL_BATCH) : accepted
      await this.write(batch, ids, run)
      if (!run.partial) break
    }
    const written = checks.filter((c) => !c.refused)
    return outcome(checks, written.length, ids)
  }

  /** Every rule on every line, before anything is written; the dry run's answer. */
  private async check ({ users, where }: ImportRun): Promise<LineCheck[]> {
    const checks = users.map((line, index) => new LineCheck(index, line, where, this.options.withDetails))
    this.validate ??= lineValidator(this.options.breached)
    for (const check of checks) check.schemaRules(this.validate)
    for (const check of checks) if (!check.failed('')) ownRules(check)
    await this.unique(checks)
    return checks
  }

  /** A duplicate email or id, of an earlier line or of a user already there: "The F field is already taken". */
  private async unique (checks: LineCheck[]): Promise<void> {
    const candidates = checks.filter((c) => !c.failed('')).map((c) => ({ check: c, line: checkedLine(c.line) }))
    const emails = candidates.filter((c) => !c.check.failed('email')).map((c) => c.line.email)
    const ids = candidates.filter((c) => c.line.id !== undefined && !c.check.failed('id')).map((c) => c.line.id ?? '')
    const taken = await this.options.store.users.taken(emails, ids)
    for (const { check, line } of candidates) {
      if (!check.failed('email') && (taken.emails.has(line.email))) check.add('email', 'unique', TAKEN)
      else if (!check.failed('email')) taken.emails.add(line.email)
      if (line.id === undefined || check.failed('id')) continue
      if (taken.ids.has(line.id)) check.add('id', 'unique', TAKEN)
      else taken.ids.add(line.id)
    }
  }

  /**
   * Plain passwords are hashed before the transaction opens (argon2 waits on libuv's pool, and a
   * held transaction would block SQLite's one connection). A row another writer took meanwhile
   * refuses its line: the whole import rolls back, or with `partial` that line alone.
   */
  private async write (batch: LineCheck[], ids: Map<number, string>, run: ImportRun): Promise<void> {
    const { store, audit } = this.options
    const rows = await this.rows(batch, ids)
    const now = new Date().toISOString()
    const lost = await store.transaction(async (tx) => {
      const inserted = new Set(await tx.users.insertMany(rows, now))
      const lost = batch.filter((c) => !inserted.has(ids.get(c.index) ?? ''))
      for (const check of lost) check.add('email', 'unique', TAKEN)
      if (lost.length > 0 && !run.partial) throw refusal(lost)
      return lost
    })
    audit({ event: 'users_imported', actorId: run.requester.actorId, detail: `created ${batch.length - lost.length}${run.partial ? ' (partial)' : ''}` }, run.requester.context)
  }

  private async rows (batch: LineCheck[], ids: Map<number, string>): Promise<ImportedUser[]> {
    const lines = batch.map((c) => ({ index: c.index, user: checkedLine(c.line) }))
    const hashes = await this.hashAll(lines.map((l) => l.user))
    return lines.map(({ index, user }, i) => ({
      id: ids.get(index) ?? randomUUID(),
      email: user.email,
      name: user.name,
      age: user.age ?? null,
      passwordHash: hashes[i] ?? '',
      roles: user.roles ?? this.options.defaultRoles,
      isSuperuser: user.is_superuser ?? false,
      emailVerified: user.email_verified ?? false,
      createdAt: user.created_at === undefined ? new Date().toISOString() : new Date(user.created_at).toISOString()
    }))
  }

  /** An imported hash as given, a plain password as today's argon2id, neither as '' (no password). */
  private async hashAll (users: CheckedLine[]): Promise<string[]> {
    const hashes = users.map((u) => u.password_hash ?? '')
    let next = 0
    const worker = async (): Promise<void> => {
      for (let i = next++; i < users.length; i = next++) {
        const password = users[i]?.password
        if (password !== undefined) hashes[i] = await this.options.hasher.hash(password)
      }
    }
    await Promise.all(Array.from({ length: HASHING_CONCURRENCY }, worker))
    return hashes
  }
}

/** The 422 of an import refused whole: every refused line's errors under its own names. */
export function refusal (refused: Array<LineCheck | LineResult>): ValidationFailed {
  const sorted = refused.flatMap((c) => (c instanceof LineCheck ? [c.sorted()] : 'errors' in c ? [c] : []))
  const details = sorted.flatMap((p) => p.details)
  return new ValidationFailed(Object.assign({}, ...sorted.map((p) => p.errors)) as Record<string, string[]>, details.length > 0 ? details : undefined)
}

function outcome (checks: LineCheck[], created: number, ids: Map<number, string>): ImportOutcome {
  const results = checks.map((c): LineResult => (c.refused ? { index: c.index, ...c.sorted() } : { index: c.index, id: ids.get(c.index) ?? checkedLine(c.line).id ?? randomUUID() }))
  return { created, refused: checks.filter((c) => c.refused).length, results }
}
