import type { ErrorObject } from 'ajv'

/** Message templates (docs/validation.md); F is the field, P the rule's parameter. */
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
  breached: 'The F field is a known breached password',
  invalid: 'The F field is invalid'
}

/** `message`, when set, is a schema's own override (ajv-errors' `errorMessage`), used as written. */
interface RuleFailure { tag: string, template: string, param?: unknown, message?: string }
/** What the failing value is and whether its object lists it as required. */
interface FailedAt { value: unknown, required: boolean }

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
  notBreached: () => ({ tag: 'breached', template: 'breached' }),
  additionalProperties: () => ({ tag: 'unknown', template: 'invalid' }),
  // the else branch that failed reports its own rules (omitEmpty); the wrapper adds nothing
  if: () => null,
  anyOf: () => ({ tag: 'invalid', template: 'invalid' }),
  // ajv-errors' override: its own message, under the tag of the rule it replaced
  errorMessage: (e, at) => {
    const replaced = (e.params.errors as ErrorObject[]).map((r) => ruleOf(r, at)).find((r) => r !== null)
    return { tag: replaced?.tag ?? 'invalid', template: 'invalid', message: e.message }
  }
}

export function ruleOf (error: ErrorObject, at: FailedAt): RuleFailure | null {
  const rule = KEYWORD_RULES[error.keyword]
  return rule === undefined ? { tag: error.keyword, template: 'invalid' } : rule(error, at)
}
