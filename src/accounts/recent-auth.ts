import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import { InvalidPassword, ReauthRequired, TokenRevoked } from '../errors.js'
import type { Claims } from '../tokens/claims.js'
import type { PasswordCheck } from './password-check.js'

export interface RecentAuthOptions {
  store: Store
  /** counted by the change-password throttle (a wrong password here is the same guess); a right one rehashes a legacy hash */
  passwords: PasswordCheck
  audit: AuditSink
  /** seconds: REAUTH_MAX_AGE */
  maxAge: number
  /** wall clock, ms */
  clock: () => number
}

/**
 * Recent authentication (docs/passkeys.md#recent-authentication): the changes that add or remove a
 * way in (a passkey, an API key) need a sign-in within REAUTH_MAX_AGE, or the password again, so a
 * token or a browser left signed in does not suffice to keep a way back in.
 */
export class RecentAuthentication {
  constructor (private readonly options: RecentAuthOptions) {}

  /** Whether the token's `auth_time` is within REAUTH_MAX_AGE (the portal asks for the password, or a new sign-in, when it is not). */
  isRecent (caller: Claims): boolean {
    return this.options.clock() / 1000 - caller.auth_time <= this.options.maxAge
  }

  /** The token's `auth_time` is recent, or `password` is the user's; else 403 reauth_required, and a wrong password 400 invalid_password. */
  async require (caller: Claims, password: string | undefined, context: RequestContext): Promise<void> {
    const { store, passwords, audit } = this.options
    if (password === undefined) {
      if (this.isRecent(caller)) return
      throw new ReauthRequired()
    }
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    if (await passwords.counted(user, password, context)) return
    audit({ event: 'login_failed', outcome: 'failure', actorId: user.id, userId: user.id, sessionId: caller.session_id, detail: 'reauth' }, context)
    throw new InvalidPassword()
  }
}
