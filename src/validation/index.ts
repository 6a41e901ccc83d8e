import type { Ajv } from 'ajv'
import ajvErrors from 'ajv-errors'
import { ruleFormats } from './formats.js'
import { ruleKeywords } from './keywords.js'

/*
 * The Ajv side of the validation rules (docs/validation.md): in src/ because Ajv needs no
 * framework (the CLI checks an email with the API's format); TypeBox wrappers are in schemas/.
 */

export { ruleFormats } from './formats.js'
export { toValidationFailed } from './to-validation-failed.js'

export function addRules (ajv: Ajv): Ajv {
  for (const [name, format] of Object.entries(ruleFormats)) ajv.addFormat(name, format)
  for (const keyword of ruleKeywords) ajv.addKeyword(keyword)
  return ajvErrors.default(ajv)
}
