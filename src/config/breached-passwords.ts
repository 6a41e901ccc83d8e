import { Type, type Static, type TObject } from '@sinclair/typebox'
import { openSetting } from '../breached-passwords/blocklist.js'

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
 * command) with the setting's name, before any worker is forked; the services open it again to
 * search it (a ConfigError too, should it have gone meanwhile).
 */
export function breachedPasswordsConfig (raw: Static<TObject<typeof BreachedPasswordsSettings>>): BreachedPasswordsConfig {
  const file = raw.BREACHED_PASSWORDS_FILE
  if (file === undefined) return { breachedPasswords: undefined }
  const list = openSetting(file)
  list.close()
  return { breachedPasswords: { file, count: list.count } }
}
