import { Type, type Static, type TObject } from '@sinclair/typebox'
import { Blocklist } from '../breached-passwords/blocklist.js'
import { ConfigError } from '../errors.js'

/** The offline breached-password blocklist (docs/breached-passwords.md), spread into ConfigSchema (src/config/config.ts). */
export const BreachedPasswordsSettings = {
  BREACHED_PASSWORDS_FILE: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'a blocklist built by `gatehouse passwords build-blocklist`: a new password found in it is refused (422, "The F field is a known ' +
      'breached password") wherever one is set. Read with positioned reads, never loaded whole; an unreadable or malformed file stops the start'
  }))
}

export interface BreachedPasswordsConfig {
  /** BREACHED_PASSWORDS_FILE, checked readable and well formed at load; undefined when unset */
  breachedPasswords: { file: string, count: number } | undefined
}

/**
 * The file is opened and its header checked here, so a bad one stops the start (and every CLI
 * command) with the setting's name; the services open it again to search it.
 */
export function breachedPasswordsConfig (raw: Static<TObject<typeof BreachedPasswordsSettings>>): BreachedPasswordsConfig {
  const file = raw.BREACHED_PASSWORDS_FILE
  if (file === undefined) return { breachedPasswords: undefined }
  let list: Blocklist
  try {
    list = Blocklist.open(file)
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException
    const why = code === undefined ? message : `cannot be read (${code})`
    throw new ConfigError(`Invalid configuration: BREACHED_PASSWORDS_FILE ${file} ${why}`)
  }
  list.close()
  return { breachedPasswords: { file, count: list.count } }
}
