import { randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'

/*
 * The key format (docs/api-keys.md#the-format): `gh_<id>_<secret>`, the id 12 × [0-9a-z], the secret
 * 32 random [0-9A-Za-z] and 6 more that are the CRC32 (IEEE 802.3, as zlib) of every byte before
 * them, in base62 (`0-9A-Za-z`, most significant first, left-padded with `0`). A secret scanner
 * matches `gh_[0-9a-z]{12}_[0-9A-Za-z]{38}` and checks the checksum offline; gatehouse refuses a
 * bad one before any lookup.
 */

export const KEY_PREFIX = 'gh_'
export const ID_LENGTH = 12
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
/** `gh_` + id + `_` + secret */
export const KEY_LENGTH = KEY_PREFIX.length + ID_LENGTH + 1 + RANDOM_LENGTH + CHECKSUM_LENGTH

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'

/** Uniform characters of `alphabet` from random bytes: a byte past the last whole multiple is drawn again. */
function randomOf (alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length)
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length]
    }
  }
  return out
}

export function base62Checksum (text: string): string {
  let value = crc32(text)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

export function generateKey (): { id: string, key: string } {
  const id = randomOf(ID_ALPHABET, ID_LENGTH)
  const body = `${KEY_PREFIX}${id}_${randomOf(BASE62, RANDOM_LENGTH)}`
  return { id, key: body + base62Checksum(body) }
}

/** One table for both classes, so the shape check is a load per character. */
const CLASS = new Uint8Array(128)
for (const c of BASE62) CLASS[c.charCodeAt(0)] = 1
for (const c of ID_ALPHABET) CLASS[c.charCodeAt(0)] = 3

const UNDERSCORE = 0x5f
const ID_START = KEY_PREFIX.length
const SECRET_START = ID_START + ID_LENGTH + 1

/** A token that starts as a key does (`gh_`); whether it is one is `keyIdOf`'s question. */
export function looksLikeKey (token: string): boolean {
  return token.charCodeAt(0) === 0x67 && token.charCodeAt(1) === 0x68 && token.charCodeAt(2) === UNDERSCORE
}

/** The key's id when `token` has the shape and a correct checksum, else undefined: no lookup for a made-up key. */
export function keyIdOf (token: string): string | undefined {
  if (token.length !== KEY_LENGTH || !looksLikeKey(token) || token.charCodeAt(SECRET_START - 1) !== UNDERSCORE) return undefined
  for (let i = ID_START; i < SECRET_START - 1; i++) {
    const c = token.charCodeAt(i)
    if (c >= 128 || CLASS[c] !== 3) return undefined
  }
  for (let i = SECRET_START; i < KEY_LENGTH; i++) {
    const c = token.charCodeAt(i)
    if (c >= 128 || CLASS[c] === 0) return undefined
  }
  const checked = KEY_LENGTH - CHECKSUM_LENGTH
  if (base62Checksum(token.slice(0, checked)) !== token.slice(checked)) return undefined
  return token.slice(ID_START, SECRET_START - 1)
}
