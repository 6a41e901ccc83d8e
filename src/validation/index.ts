import type { Ajv } from 'ajv'
import ajvErrors from 'ajv-errors'
import { ruleFormats } from './formats.js'
import { ruleKeywords } from './keywords.js'

/*
 * The validation rule library (docs/validation.md): the Ajv side of the rules. It is kept in
 * src/ because Ajv needs no framework (the CLI checks an email with the same format the API
 * does), and apart from schemas/, which holds TypeBox constants only. A schema names a rule by
 * a format or a keyword; the TypeBox wrappers for the rules that are more than one keyword
 * (required, omitempty, dive) are in schemas/rule-wrappers.ts.
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
 * A schema may word one rule's message itself with ajv-errors' `errorMessage` keyword; the
 * templates stay the default everywhere else. The override replaces the rule's message under
 * the same field, as written (no F/P placeholders):
 *
 *   handle: Type.String({ format: 'username', errorMessage: { format: 'Pick another handle' } })
 *   Type.Object({ … }, { errorMessage: { required: { handle: 'Choose a handle' } } })
 *
 * ajv-errors needs Ajv's `allErrors` (plugins/validation.ts sets it) and replaces the errors it
 * covers with one `errorMessage` error that wraps them; messages.ts maps it back to the rule.
 *
 * The files:
 *   formats.ts                 the rule formats (email, password, phone, …)
 *   keywords.ts                the keywords JSON Schema lacks (notBlank, len, startsWith)
 *   messages.ts                an Ajv failure → its rule tag and message template; adding a rule is data
 *   to-validation-failed.ts    Ajv's errors → the 422's `{field: [messages]}`
 */

export { ruleFormats } from './formats.js'
export { toValidationFailed } from './to-validation-failed.js'

/** The rule formats and keywords, and ajv-errors' `errorMessage`, on an Ajv built with `allErrors`. */
export function addRules (ajv: Ajv): Ajv {
  for (const [name, format] of Object.entries(ruleFormats)) ajv.addFormat(name, format)
  for (const keyword of ruleKeywords) ajv.addKeyword(keyword)
  return ajvErrors.default(ajv)
}
