import type { Ajv } from 'ajv'
import ajvErrors from 'ajv-errors'
import { ruleFormats } from './formats.js'
import { ruleKeywords } from './keywords.js'
import { notBreached, type BreachedCheck } from './not-breached.js'

/*
 * The Ajv side of the validation rules (docs/validation.md): in src/ because Ajv needs no
 * framework (the CLI checks an email with the API's format); TypeBox wrappers are in schemas/.
 */

export { ruleFormats } from './formats.js'
export { toValidationFailed } from './to-validation-failed.js'
export type { BreachedCheck } from './not-breached.js'

/** The rules on an Ajv instance; `breached` is the blocklist `notBreached` asks (none: the keyword always passes). */
export function addRules (ajv: Ajv, breached: () => BreachedCheck | undefined = () => undefined): Ajv {
  for (const [name, format] of Object.entries(ruleFormats)) ajv.addFormat(name, format)
  for (const keyword of [...ruleKeywords, notBreached(breached)]) ajv.addKeyword(keyword)
  return ajvErrors.default(ajv)
}
