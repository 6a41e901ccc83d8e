import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../errors.js'
import { makePrivateDir } from './data-dir.js'

export const REGENERATE = 'delete it to generate a new one'

/**
 * A development secret gatehouse generates once into DATA_DIR (the JWT secret, the data
 * encryption keys): read when present and refused when it is not what gatehouse wrote (empty, or
 * open to other users), else generated, written whole (mode 0600) and published atomically. When
 * another process publishes it first, theirs is used, so every worker holds the same secret.
 */
export interface GeneratedSecret { value: string, created: boolean, file: string }

export function readOrGenerateSecret (dataDir: string, name: string, label: string, generate: () => string): GeneratedSecret {
  const file = join(dataDir, name)
  const existing = readSecretFile(file, label)
  if (existing !== undefined) return { value: existing, created: false, file }
  makePrivateDir(dataDir)
  const generated = generate()
  if (!publish(file, generated)) return { value: readSecretFile(file, label) ?? generated, created: false, file }
  return { value: generated, created: true, file }
}

/** The file's content, checked for mode and emptiness; undefined when there is no file. `remedy` ends the refusal's message. */
export function readSecretFile (file: string, label: string, remedy = REGENERATE): string | undefined {
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
  if (problem !== undefined) throw new ConfigError(`Invalid configuration: the ${label} ${file} ${problem}; ${remedy}`)
  return content
}

/**
 * Writes the secret to a private temporary file, then links it into place: the file appears whole
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

/** Rewrites the file with exactly `secret`, atomically. */
export function replaceSecretFile (file: string, secret: string): void {
  renameSync(writePrivate(file, secret), file)
}

/** A fresh file beside `file` holding exactly `secret`, mode 0600 whatever the umask. */
function writePrivate (file: string, secret: string): string {
  const temporary = `${file}.${process.pid}.tmp`
  rmSync(temporary, { force: true })
  writeFileSync(temporary, secret, { mode: 0o600, flag: 'wx' })
  return temporary
}
