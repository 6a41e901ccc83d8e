import { Ajv, type Options } from 'ajv'
import ajvErrors from 'ajv-errors'
import addFormats from 'ajv-formats'
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

/**
 * Ajv's options, decided on purpose (docs/validation.md): every error is reported (every string
 * and array is bounded, so that stays cheap, and ajv-errors' `errorMessage` overrides require
 * it), and unknown properties are refused rather than stripped. The server's validator
 * (plugins/validation.ts) and the import's line checks (src/imports/) build theirs here.
 */
export function buildAjv (options: Options = {}, breached: () => BreachedCheck | undefined = () => undefined): Ajv {
  const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: true, strictTypes: false }
  return addRules(addFormats.default(new Ajv({ ...base, ...options }), ['uuid', 'date-time', 'uri']), breached)
}
