import { randomBytes } from 'node:crypto'
import { ConfigError } from '../errors.js'
import { notice } from './notices.js'
import { readOrGenerateSecret, REGENERATE, replaceSecretFile } from './secret-file.js'
import { estimateEntropy } from './secret-strength.js'

const MIN_BYTES = 32
const MIN_DISTINCT = 8
/** As hard to guess as a 128-bit random key: what HS256's security rests on (src/config/secret-strength.ts estimates it). */
const MIN_BITS = 128
const GENERATE = 'generate one with `openssl rand -base64 32` or ' +
  '`node -e "console.log(require(\'node:crypto\').randomBytes(32).toString(\'base64\'))"`'
const LABEL = 'development secret file'

/**
 * An HS256 key shorter than the hash (RFC 7518 §3.2), made of a handful of characters
 * (`xxxx…`), or patterned or memorable (`abcdefgh` four times, a sentence of words) can be
 * guessed offline from any token it signed.
 */
function weakness (secret: string): string | undefined {
  if (tooShort(secret) !== undefined) return tooShort(secret)
  if (new Set(secret).size < MIN_DISTINCT) return `must contain at least ${MIN_DISTINCT} distinct characters`
  const bits = estimateEntropy(secret)
  return bits < MIN_BITS
    ? `looks patterned or made of words (an estimated ${Math.floor(bits)} bits of entropy, at least ${MIN_BITS} required); ${GENERATE}`
    : undefined
}

function tooShort (secret: string): string | undefined {
  return Buffer.byteLength(secret) < MIN_BYTES ? `must be at least ${MIN_BYTES} bytes` : undefined
}

/**
 * JWT_SECRET as given, or in development the key generated once into DATA_DIR/jwt-secret so
 * tokens survive a restart. Production requires a strong JWT_SECRET; development takes any given
 * one of 32 bytes (a developer's choice), but refuses a generated file that is not what gatehouse
 * wrote: empty, weak, or open to other users — the file is then deleted by hand and regenerated.
 */
export function resolveSecret (secret: string | undefined, production: boolean, dataDir: string): string {
  if (secret !== undefined) {
    const weak = production ? weakness(secret) : tooShort(secret)
    if (weak !== undefined) throw new ConfigError(`Invalid configuration: JWT_SECRET ${weak}`)
    return secret
  }
  if (production) throw new ConfigError('Invalid configuration: JWT_SECRET is required when APP_ENV=production')
  const { value, created, file } = readOrGenerateSecret(dataDir, 'jwt-secret', LABEL, () => randomBytes(48).toString('base64url'))
  if (created) {
    notice(`JWT_SECRET is not set: generated a development secret in ${file}. Set JWT_SECRET in production.`)
    return value
  }
  return checkedFileSecret(file, value)
}

/** The key a secret file holds, refused when weak; an older version's trailing newline is dropped for good. */
function checkedFileSecret (file: string, content: string): string {
  // versions before 0.2 wrote the key and a newline: the key is what precedes it
  const secret = content.endsWith('\n') ? content.slice(0, -1) : content
  if (weakness(secret) !== undefined) {
    throw new ConfigError(`Invalid configuration: the ${LABEL} ${file} is weaker than JWT_SECRET allows ` +
      `(at least ${MIN_BYTES} bytes, ${MIN_DISTINCT} distinct characters and an estimated ${MIN_BITS} bits of entropy); ${REGENERATE}`)
  }
  if (secret !== content) replaceSecretFile(file, secret)
  return secret
}
