import type { ServiceEvents } from '../events.js'
import { openSetting, type Blocklist } from './blocklist.js'

/**
 * The check every place that sets a password makes (docs/breached-passwords.md): the Ajv keyword
 * `notBreached` of the API's and the portal's schemas (src/validation/), `gatehouse user create`
 * and `set-password`, the import's lines. A listed password is counted as refused
 * (`gatehouse_breached_passwords_refused_total`), so call it only once the value passed its other
 * rules and is about to be refused for this alone.
 */
export class BreachedPasswords {
  private constructor (private readonly list: Blocklist, private readonly events: ServiceEvents) {}

  /** BREACHED_PASSWORDS_FILE, opened and checked; a ConfigError naming the setting if it is refused. */
  static open (file: string, events: ServiceEvents): BreachedPasswords {
    return new BreachedPasswords(openSetting(file), events)
  }

  /** The number of entries in the file. */
  get count (): number {
    return this.list.count
  }

  /** Whether the password is a known breached one, which refuses it; never calls the network. */
  refuses (password: string): boolean {
    const listed = this.list.has(password)
    if (listed) this.events.emit('breached_password', {})
    return listed
  }

  close (): void {
    this.list.close()
  }
}
