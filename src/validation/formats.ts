import type { FormatDefinition } from 'ajv'
import addFormats from 'ajv-formats'

const SPECIALS = /[!@#$%^&*()_+\-=[\]{}|;:,.<>?]/
const hasClasses = (s: string) => /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s) && SPECIALS.test(s)
/** Lengths count characters (code points), as Ajv's minLength/maxLength do. */
export const length = (s: string) => [...s].length

// ajv-formats' own full-mode definitions, through its public `get`
const emailPattern = addFormats.default.get('email') as RegExp
const uriFormat = addFormats.default.get('uri') as (s: string) => boolean

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
  // emails are trimmed before use, so surrounding spaces do not fail the format
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
