import type { ValidateFunction } from 'ajv'
import { ImportUser } from '../../schemas/import.js'
import { parseHash } from '../crypto/legacy-hashes.js'
import { normalizeEmail } from '../accounts/users.js'
import type { ValidationDetail } from '../errors.js'
import { buildAjv, toValidationFailed, type BreachedCheck } from '../validation/index.js'

/** How a refused line names its fields: `users.3.email` in a request body, `email` on a file's line. */
export type Where = 'body' | 'file'

/** A file's line that is not JSON at all: refused with the parser's word, like any other line. */
export class UnreadableLine {
  constructor (readonly message: string) {}
}

export interface LineProblems { errors: Record<string, string[]>, details: ValidationDetail[] }

/** A line that passed every rule, its email normalised and its id lower-cased. */
export type CheckedLine = ImportUser & { email: string }

const FIELD_ORDER = Object.keys(ImportUser.properties)
const BODY_SCHEMA = { properties: { users: { items: ImportUser } } }
const PASSWORD_FIELD = /password/

/** A line's schema with the API's own Ajv options, rules and messages; a `password` is held to BREACHED_PASSWORDS_FILE as the API's are. */
export function lineValidator (breached: BreachedCheck | undefined): ValidateFunction {
  return buildAjv({ coerceTypes: false }, () => breached).compile(ImportUser)
}

/** One line's problems, named as `where` names fields, in ImportUser's property order. */
export class LineCheck {
  readonly problems: LineProblems = { errors: {}, details: [] }
  private readonly prefix: string

  constructor (readonly index: number, readonly line: unknown, private readonly where: Where, private readonly withDetails: boolean) {
    this.prefix = where === 'body' ? `users.${index}` : ''
  }

  nameOf (field: string): string {
    if (this.prefix === '') return field === '' ? 'line' : field
    return field === '' ? this.prefix : `${this.prefix}.${field}`
  }

  get refused (): boolean {
    return Object.keys(this.problems.errors).length > 0
  }

  /** Whether the schema's rules already refused this field (the import's own rules then say nothing more). */
  failed (field: string): boolean {
    return this.problems.errors[this.nameOf(field)] !== undefined
  }

  /** The schema's rules, through the same Ajv errors → 422 mapping as every request body. */
  schemaRules (validate: ValidateFunction): void {
    if (this.line instanceof UnreadableLine) {
      this.add('', 'json', `The line is not valid JSON (${this.line.message})`)
      return
    }
    if (validate(this.line)) return
    const errors = (validate.errors ?? []).map((e) => ({ ...e, instancePath: this.where === 'body' ? `/users/${this.index}${e.instancePath}` : e.instancePath }))
    const part = this.where === 'body'
      ? { context: 'body', data: { users: { [this.index]: this.line } }, schema: BODY_SCHEMA }
      : { context: 'line', data: this.line, schema: ImportUser }
    const failed = toValidationFailed(errors, { ...part, withDetails: this.withDetails })
    this.problems.errors = failed.errors
    this.problems.details = failed.details ?? []
  }

  /** A rule of the import's own: "The F field …". */
  add (field: string, tag: string, text: string): void {
    const name = this.nameOf(field)
    const message = field === '' && this.where === 'file' ? text : `The ${name} field ${text}`
    ;(this.problems.errors[name] ??= []).push(message)
    if (!this.withDetails) return
    const value = (this.line as Record<string, unknown> | undefined)?.[field]
    this.problems.details.push({ field: name, tag, value: PASSWORD_FIELD.test(field) || typeof value !== 'string' ? '' : value, message })
  }

  /** The errors in ImportUser's property order, whichever rule found them. */
  sorted (): LineProblems {
    // the line itself first, then ImportUser's order, then the properties it does not know
    const rank = (key: string) => {
      if (key === this.nameOf('')) return -1
      const at = FIELD_ORDER.indexOf(key.slice(this.prefix === '' ? 0 : this.prefix.length + 1).split('.')[0] ?? '')
      return at === -1 ? FIELD_ORDER.length : at
    }
    const keys = Object.keys(this.problems.errors).sort((a, b) => rank(a) - rank(b))
    return { errors: Object.fromEntries(keys.map((key) => [key, this.problems.errors[key] ?? []])), details: this.problems.details }
  }
}

/** The rules a schema cannot say: the hash's format and bounds, one password at most, a time that exists. */
export function ownRules (check: LineCheck): void {
  const user = check.line as ImportUser
  if (typeof user.password_hash === 'string' && !check.failed('password_hash')) {
    const hash = parseHash(user.password_hash)
    if (!hash.ok && hash.reason === 'unsupported') check.add('password_hash', 'hash_format', 'is not a supported hash format')
    if (!hash.ok && hash.reason === 'out_of_range') check.add('password_hash', 'hash_parameters', `has parameters out of range (${hash.parameter})`)
    if (user.password !== undefined) check.add('password_hash', 'excluded_with', 'is invalid')
  }
  // RFC 3339 allows a leap second (23:59:60), which no Date holds: refused rather than moved
  if (typeof user.created_at === 'string' && !check.failed('created_at') && Number.isNaN(Date.parse(user.created_at))) check.add('created_at', 'date-time', 'is invalid')
}

/** The line as the import writes it, once it passed. */
export function checkedLine (line: unknown): CheckedLine {
  const user = line as ImportUser
  return { ...user, email: normalizeEmail(user.email), ...(user.id !== undefined && { id: user.id.toLowerCase() }) }
}
