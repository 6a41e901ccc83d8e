import { Type, type ArrayOptions, type Static, type TArray, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { _, type Ajv, type ErrorObject, type FormatDefinition, type KeywordDefinition } from 'ajv'
import { fullFormats } from 'ajv-formats/dist/formats.js'

/*
 * The validation rule library (SPEC §6). Each rule is an Ajv format or keyword, written in a
 * TypeBox schema as an option or a wrapper:
 *
 *   required     any property the object requires (absent or null); required(schema), i.e.
 *                `notBlank: true`, also refuses '' and only spaces (and null where optional)
 *   omitempty    omitEmpty(schema)                     ('' or [] skips every other rule)
 *   email, url, password, strong_password, phone, slug, username, date, future_date
 *                Type.String({ format: 'slug' })
 *   min, max     minLength/maxLength, minimum/maximum, minItems/maxItems
 *   len          Type.String({ len: 5 }) or Type.Array(item, { len: 3 })
 *   startswith   Type.String({ startsWith: 'sk_' })
 *   dive         dive(itemSchema, { maxItems })         (errors at `tags.0`)
 *   nested       Type.Object inside Type.Object         (errors at `address.city`)
 *
 * The tables at the bottom map an Ajv failure to its rule tag and message template, so adding
 * a rule is data. ajv-errors is deliberately not used: its `errorMessage` would spread the
 * seed's templates over every schema, where one table keyed by rule keeps them exact.
 */

const SPECIALS = /[!@#$%^&*()_+\-=[\]{}|;:,.<>?]/
const hasClasses = (s: string) => /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s) && SPECIALS.test(s)
/** Lengths count characters (code points), as Ajv's minLength/maxLength do. */
const length = (s: string) => [...s].length

const emailPattern = fullFormats.email as RegExp
const uriFormat = fullFormats.uri as (s: string) => boolean

/** YYYY-MM-DD naming a day that exists: 2024-02-29 is one, 2025-02-30 is not. */
function isCalendarDate (s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
  return days !== undefined && day >= 1 && day <= days
}

/** Formats keyed by rule tag (Ajv reports `params.format`, which is the tag). */
export const ruleFormats: Record<string, FormatDefinition<string>> = {
  // emails are trimmed before use (SPEC §2), so surrounding spaces do not fail the format
  email: { type: 'string', validate: (s) => emailPattern.test(s.trim()) },
  // an absolute URI with a scheme (https://…, mailto:…); a bare host is not a URL
  url: { type: 'string', validate: (s) => uriFormat(s) },
  password: { type: 'string', validate: (s) => length(s) >= 8 && hasClasses(s) },
  strong_password: { type: 'string', validate: (s) => length(s) >= 12 && hasClasses(s) },
  // E.164-like: an optional leading + then 10 to 15 digits, no spaces or dashes (clients strip them)
  phone: { type: 'string', validate: (s) => /^\+?[0-9]{10,15}$/.test(s) },
  slug: { type: 'string', validate: (s) => /^[a-z0-9-]*$/.test(s) },
  username: { type: 'string', validate: (s) => /^[A-Za-z0-9_]{3,20}$/.test(s) },
  date: { type: 'string', validate: isCalendarDate },
  // later than now: today (UTC) is not in the future, tomorrow is
  future_date: { type: 'string', validate: (s) => isCalendarDate(s) && s > new Date().toISOString().slice(0, 10) }
}

/** Keywords that JSON Schema lacks; each reports its parameter as `params.limit`/`params.prefix`. */
export const ruleKeywords: KeywordDefinition[] = [
  {
    // a present value: `null`, '' and only spaces count as absent. It also applies to null so
    // that `null` fails here (as `required`) whatever the schema's type.
    keyword: 'notBlank',
    type: ['string', 'null'],
    schemaType: 'boolean',
    validate: (enabled: boolean, data: string | null) => !enabled || (data !== null && data.trim().length > 0),
    errors: false
  },
  {
    keyword: 'len',
    type: ['string', 'array'],
    schemaType: 'number',
    validate: (n: number, data: string | unknown[]) => (typeof data === 'string' ? length(data) : data.length) === n,
    error: { message: 'must have the exact length', params: ({ schemaCode, data }) => _`{limit: ${schemaCode}, items: Array.isArray(${data})}` },
    errors: false
  },
  {
    keyword: 'startsWith',
    type: 'string',
    schemaType: 'string',
    validate: (prefix: string, data: string) => data.startsWith(prefix),
    error: { message: 'must start with the prefix', params: ({ schemaCode }) => _`{prefix: ${schemaCode}}` },
    errors: false
  }
]

export function addRules (ajv: Ajv): Ajv {
  for (const [name, format] of Object.entries(ruleFormats)) ajv.addFormat(name, format)
  for (const keyword of ruleKeywords) ajv.addKeyword(keyword)
  return ajv
}

/** `required`: present, not null, not '' or only spaces (the parent object lists it as required). */
export function required<T extends TSchema> (schema: T): T {
  return { ...schema, notBlank: true }
}

/** What "empty" means per type, for omitempty: a string's zero value and an array's. */
const EMPTY: Record<string, TSchema> = {
  string: Type.Literal(''),
  array: Type.Array(Type.Unknown(), { maxItems: 0 })
}

/**
 * `omitempty`: an empty value ('' for a string, [] for an array) is accepted as is and every
 * other rule applies to any other value; null is not empty (it fails the type). The wrapper is
 * an if/else whose own `if` failure is never reported (KEYWORD_RULES maps it to null).
 */
export function omitEmpty<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  const empty = EMPTY[String(schema.type)]
  if (empty === undefined) throw new TypeError(`omitEmpty applies to strings and arrays, not ${String(schema.type)}`)
  return Type.Unsafe<Static<T>>({ if: empty, then: true, else: schema })
}

/** `dive`: the item's rules on each element, reported at `field.index`; arrays are always bounded. */
export function dive<T extends TSchema> (item: T, options: ArrayOptions & { maxItems: number }): TArray<T> {
  return Type.Array(item, options)
}

/** Message templates (SPEC §5); F is the field, P the rule's parameter. */
export const MESSAGES: Record<string, string> = {
  required: 'The F field is required',
  email: 'The F field must be a valid email address',
  min: 'The F field must be at least P characters',
  max: 'The F field must not exceed P characters',
  min_number: 'The F field must be at least P',
  max_number: 'The F field must not exceed P',
  min_items: 'The F field must contain at least P items',
  max_items: 'The F field must not contain more than P items',
  len: 'The F field must be exactly P characters',
  len_items: 'The F field must contain exactly P items',
  url: 'The F field must be a valid URL',
  password: 'The F field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character',
  phone: 'The F field must be a valid phone number',
  slug: 'The F field must contain only lowercase letters, numbers, and hyphens',
  username: 'The F field must contain only letters, numbers, and underscores',
  strong_password: 'The F field must be at least 12 characters with uppercase, lowercase, digit, and special character',
  invalid: 'The F field is invalid'
}

export interface RuleFailure { tag: string, template: string, param?: unknown }
/** What the failing value is and whether its object lists it as required. */
export interface FailedAt { value: unknown, required: boolean }

const REQUIRED: RuleFailure = { tag: 'required', template: 'required' }
const limit = (tag: string, template: string) => (e: ErrorObject): RuleFailure => ({ tag, template, param: e.params.limit })

/** Ajv keyword → rule. Anything not listed is `invalid` under its keyword; `null` means "reported elsewhere". */
const KEYWORD_RULES: Record<string, (e: ErrorObject, at: FailedAt) => RuleFailure | null> = {
  required: () => REQUIRED,
  notBlank: () => REQUIRED,
  // null for a property its object requires is a missing value, whatever the property's type
  type: (_e, at) => (at.value === null && at.required ? REQUIRED : { tag: 'type', template: 'invalid' }),
  format: (e) => {
    const tag = String(e.params.format)
    return { tag, template: tag in MESSAGES ? tag : 'invalid' }
  },
  minLength: limit('min', 'min'),
  maxLength: limit('max', 'max'),
  minimum: limit('min', 'min_number'),
  maximum: limit('max', 'max_number'),
  minItems: limit('min', 'min_items'),
  maxItems: limit('max', 'max_items'),
  len: (e) => ({ tag: 'len', template: e.params.items === true ? 'len_items' : 'len', param: e.params.limit }),
  startsWith: (e) => ({ tag: 'startswith', template: 'invalid', param: e.params.prefix }),
  additionalProperties: () => ({ tag: 'unknown', template: 'invalid' }),
  // the else branch that failed reports its own rules (omitEmpty); the wrapper adds nothing
  if: () => null,
  anyOf: () => ({ tag: 'invalid', template: 'invalid' })
}

export function ruleOf (error: ErrorObject, at: FailedAt): RuleFailure | null {
  const rule = KEYWORD_RULES[error.keyword]
  return rule === undefined ? { tag: error.keyword, template: 'invalid' } : rule(error, at)
}
