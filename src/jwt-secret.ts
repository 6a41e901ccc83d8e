import { randomBytes } from 'node:crypto'
import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from './config-error.js'
import { makePrivateDir } from './data-dir.js'

const MIN_BYTES = 32
const MIN_DISTINCT = 8
const REGENERATE = 'delete it to generate a new one'

/**
 * An HS256 key shorter than the hash (RFC 7518 §3.2) or made of a handful of characters
 * (`xxxx…`, `secretsecret…`) can be guessed offline from any token it signed.
 */
function weakness (secret: string): string | undefined {
  return tooShort(secret) ?? (new Set(secret).size < MIN_DISTINCT ? `must contain at least ${MIN_DISTINCT} distinct characters` : undefined)
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
  const file = join(dataDir, 'jwt-secret')
  const existing = readSecretFile(file)
  if (existing !== undefined) return existing
  makePrivateDir(dataDir)
  const generated = randomBytes(48).toString('base64url')
  if (!publish(file, generated)) {
    // another process created it first: use theirs so every worker signs with one key
    return readSecretFile(file) ?? generated
  }
  process.emitWarning(`JWT_SECRET is not set: generated a development secret in ${file}. Set JWT_SECRET in production.`)
  return generated
}

/** The key in the file, checked; undefined when there is no file. */
function readSecretFile (file: string): string | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  let content: string
  let mode: number
  try {
    mode = fstatSync(fd).mode & 0o777
    content = readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
  const problem = (mode & 0o077) !== 0
    ? `is open to other users (mode 0${mode.toString(8)})`
    : content === '' ? 'is empty' : undefined
  if (problem !== undefined) throw new ConfigError(`Invalid configuration: the development secret file ${file} ${problem}; ${REGENERATE}`)
  // versions before 0.2 wrote the key and a newline: the key is what precedes it
  const secret = content.endsWith('\n') ? content.slice(0, -1) : content
  if (weakness(secret) !== undefined) {
    throw new ConfigError(`Invalid configuration: the development secret file ${file} is weaker than JWT_SECRET allows ` +
      `(at least ${MIN_BYTES} bytes and ${MIN_DISTINCT} distinct characters); ${REGENERATE}`)
  }
  if (secret !== content) replace(file, secret)
  return secret
}

/**
 * Writes the key to a private temporary file, then links it into place: the file appears whole
 * or not at all, so a second process starting at the same moment never reads it half-written.
 * False when the file already exists.
 */
function publish (file: string, secret: string): boolean {
  const temporary = writePrivate(file, secret)
  try {
    linkSync(temporary, file)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    rmSync(temporary, { force: true })
  }
}

/** Rewrites the file with exactly the key (same key: tokens it signed stay valid), atomically. */
function replace (file: string, secret: string): void {
  renameSync(writePrivate(file, secret), file)
}

/** A fresh file beside `file` holding exactly `secret`, mode 0600 whatever the umask. */
function writePrivate (file: string, secret: string): string {
  const temporary = `${file}.${process.pid}.tmp`
  rmSync(temporary, { force: true })
  writeFileSync(temporary, secret, { mode: 0o600, flag: 'wx' })
  return temporary
}
