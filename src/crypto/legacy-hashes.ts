/*
 * The password hash formats an import accepts (docs/migrating.md) and the bounds of their
 * parameters. The same parser runs at import and before every verification, so a stored hash
 * whose parameters are out of bounds costs no more than a wrong password and never matches.
 */

export const HASH_ALGORITHMS = ['argon2id', 'argon2i', 'argon2d', 'bcrypt', 'scrypt', 'pbkdf2_sha256', 'pbkdf2_sha512'] as const
export type HashAlgorithm = typeof HASH_ALGORITHMS[number]

export type ParsedHash =
  | { algorithm: 'argon2id' | 'argon2i' | 'argon2d' | 'bcrypt', text: string }
  | { algorithm: 'scrypt', salt: Buffer, key: Buffer, cost: number, blockSize: number, parallelization: number }
  | { algorithm: 'pbkdf2_sha256' | 'pbkdf2_sha512', salt: Buffer, key: Buffer, iterations: number }

export type HashCheck =
  | { ok: true, hash: ParsedHash }
  | { ok: false, reason: 'unsupported' }
  /** `parameter` reads as the message's parenthesis: `bcrypt cost 17 > 16` */
  | { ok: false, reason: 'out_of_range', parameter: string }

const UNSUPPORTED: HashCheck = { ok: false, reason: 'unsupported' }

/** A derived key shorter than this matches too many passwords to be worth keeping. */
const MIN_KEY_BYTES = 16
const MIB = 1024 * 1024

// each regex has one path through its input (no adjacent quantifiers over the same characters)
const BCRYPT = /^\$2([aby])\$(\d\d)\$([./A-Za-z0-9]{53})$/
const ARGON2 = /^\$(argon2id|argon2i|argon2d)\$v=(16|19)\$m=(\d{1,12}),t=(\d{1,12}),p=(\d{1,12})\$([A-Za-z0-9+/]{1,200})\$([A-Za-z0-9+/]{1,700})$/
const SCRYPT = /^\$scrypt\$ln=(\d{1,12}),r=(\d{1,12}),p=(\d{1,12})\$([A-Za-z0-9+/.]{1,200})\$([A-Za-z0-9+/.]{1,700})$/
const PASSLIB_PBKDF2 = /^\$pbkdf2-(sha256|sha512)\$(\d{1,12})\$([A-Za-z0-9+/.]{1,200})\$([A-Za-z0-9+/.]{1,700})$/
const DJANGO_PBKDF2 = /^pbkdf2_sha256\$(\d{1,12})\$([^$]{1,200})\$([A-Za-z0-9+/]{1,700}={0,2})$/

/**
 * Standard base64, padded or not, or passlib's "adapted" alphabet (`.` for `+`). A length that
 * leaves one character over is no base64 at all.
 */
function decodeBase64 (text: string): Buffer | undefined {
  const bare = text.replace(/=+$/, '')
  if (bare.length % 4 === 1) return undefined
  return Buffer.from(bare.replaceAll('.', '+'), 'base64')
}

/** The first parameter past a bound, written as the message's parenthesis; undefined when all hold. */
function outOfRange (name: string, checks: Array<[string, number, number, number]>): string | undefined {
  for (const [parameter, value, min, max] of checks) {
    if (value > max) return `${name} ${parameter} ${value} > ${max}`
    if (value < min) return `${name} ${parameter} ${value} < ${min}`
  }
  return undefined
}

function bounded (hash: ParsedHash, name: string, checks: Array<[string, number, number, number]>): HashCheck {
  const parameter = outOfRange(name, checks)
  return parameter === undefined ? { ok: true, hash } : { ok: false, reason: 'out_of_range', parameter }
}

/** Salt and key decoded, the key long enough; else the hash is not one of the supported forms. */
function keyed (salt: Buffer | undefined, key: Buffer | undefined): { salt: Buffer, key: Buffer } | undefined {
  if (salt === undefined || key === undefined || salt.length === 0 || key.length < MIN_KEY_BYTES) return undefined
  return { salt, key }
}

function bcryptHash (m: RegExpExecArray): HashCheck {
  // $2y$ (PHP's crypt, htpasswd -B) is $2b$ under another name; the native module knows only a and b
  const text = m[1] === 'y' ? `$2b$${m[2]}$${m[3]}` : m[0]
  return bounded({ algorithm: 'bcrypt', text }, 'bcrypt', [['cost', Number(m[2]), 4, 16]])
}

function argon2Hash (m: RegExpExecArray): HashCheck {
  const algorithm = m[1] as 'argon2id' | 'argon2i' | 'argon2d'
  const [memory, time, lanes] = [Number(m[3]), Number(m[4]), Number(m[5])]
  // argon2 itself refuses a salt under 8 bytes: such a hash could never verify
  const parts = keyed(decodeBase64(m[6] ?? ''), decodeBase64(m[7] ?? ''))
  if (parts === undefined || parts.salt.length < 8) return UNSUPPORTED
  // argon2 itself needs 8 KiB per lane; the upper bounds keep one sign-in from taking the machine
  return bounded({ algorithm, text: m[0] }, algorithm, [['t', time, 1, 10], ['p', lanes, 1, 16], ['m', memory, 8 * Math.max(lanes, 1), 262144]])
}

function scryptHash (m: RegExpExecArray): HashCheck {
  const parts = keyed(decodeBase64(m[4] ?? ''), decodeBase64(m[5] ?? ''))
  if (parts === undefined) return UNSUPPORTED
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const hash: ParsedHash = { algorithm: 'scrypt', ...parts, cost: 2 ** Math.min(ln, 64), blockSize: r, parallelization: p }
  const checks: Array<[string, number, number, number]> = [['ln', ln, 1, 20], ['r', r, 1, 16], ['p', p, 1, 16]]
  const first = bounded(hash, 'scrypt', checks)
  // scrypt's memory is 128·N·r bytes, checked once each parameter is within its own bound
  return first.ok ? bounded(hash, 'scrypt', [['memory', 128 * hash.cost * r, 0, 256 * MIB]]) : first
}

function pbkdf2Hash (digest: string, iterations: number, parts: { salt: Buffer, key: Buffer } | undefined): HashCheck {
  if (parts === undefined) return UNSUPPORTED
  const algorithm = digest === 'sha512' ? 'pbkdf2_sha512' : 'pbkdf2_sha256'
  return bounded({ algorithm, ...parts, iterations }, algorithm, [['iterations', iterations, 1000, 10_000_000]])
}

/** Which supported format `text` is, with its parameters checked against their bounds. */
export function parseHash (text: string): HashCheck {
  let m: RegExpExecArray | null
  if ((m = BCRYPT.exec(text)) !== null) return bcryptHash(m)
  if ((m = ARGON2.exec(text)) !== null) return argon2Hash(m)
  if ((m = SCRYPT.exec(text)) !== null) return scryptHash(m)
  if ((m = PASSLIB_PBKDF2.exec(text)) !== null) return pbkdf2Hash(m[1] ?? '', Number(m[2]), keyed(decodeBase64(m[3] ?? ''), decodeBase64(m[4] ?? '')))
  // Django keeps the salt as text: its UTF-8 bytes are the salt (django.contrib.auth.hashers)
  if ((m = DJANGO_PBKDF2.exec(text)) !== null) return pbkdf2Hash('sha256', Number(m[1]), keyed(Buffer.from(m[2] ?? '', 'utf8'), decodeBase64(m[3] ?? '')))
  return UNSUPPORTED
}

/** The census label of a stored hash (the metrics gauge, the rehash's audit detail); no bounds checked. */
export function algorithmOf (text: string): HashAlgorithm | 'none' | 'other' {
  if (text === '') return 'none'
  if (BCRYPT.test(text)) return 'bcrypt'
  const argon2 = /^\$(argon2id|argon2i|argon2d)\$/.exec(text)
  if (argon2 !== null) return argon2[1] as HashAlgorithm
  if (text.startsWith('$scrypt$')) return 'scrypt'
  if (text.startsWith('$pbkdf2-sha256$') || text.startsWith('pbkdf2_sha256$')) return 'pbkdf2_sha256'
  if (text.startsWith('$pbkdf2-sha512$')) return 'pbkdf2_sha512'
  return 'other'
}
