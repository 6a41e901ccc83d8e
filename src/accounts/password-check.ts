import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import { algorithmOf } from '../crypto/legacy-hashes.js'
import type { User } from '../db/users.js'
import type { FailureThrottle } from '../limits/throttle.js'

export interface PasswordCheckOptions {
  store: Store
  hasher: PasswordHasher
  audit: AuditSink
  /** the change-password throttle, which counts every guess at a signed-in user's password */
  throttle: FailureThrottle
}

/**
 * Every check of a user's password (SPEC §18): sign-in, change-password, the step-up
 * re-authentication, and the TOTP changes that ask for it (src/two-factor/, which takes this
 * check through its options, as it comes before accounts/). A right password over a hash that
 * is not today's argon2id (an imported one, older ARGON2_* parameters) is rehashed here, once.
 */
export class PasswordCheck {
  constructor (private readonly options: PasswordCheckOptions) {}

  /**
   * Whether `password` is the user's; an unknown user (undefined) costs the dummy verification and
   * is false. `rehash: false` where the caller replaces the hash itself right after (change-password).
   */
  async verify (user: User | undefined, password: string, context: RequestContext, { rehash = true } = {}): Promise<boolean> {
    const { hasher } = this.options
    const ok = await hasher.verify(user?.passwordHash, password)
    if (ok && rehash && user !== undefined && hasher.needsRehash(user.passwordHash)) await this.rehash(user, password, context)
    return ok
  }

  /** `verify` for a signed-in user (change-password, step-up, the TOTP changes), counted by the change-password throttle as the same guess. */
  async counted (user: User, password: string, context: RequestContext, options: { rehash?: boolean } = {}): Promise<boolean> {
    const { ok } = await this.options.throttle.attempt(`password:${user.id}`, context.ip, async () => ({ ok: await this.verify(user, password, context, options) }))
    return ok
  }

  /**
   * Today's argon2id over an imported or older hash, only over the hash just verified: a
   * password changed meanwhile must not be reverted, and of two concurrent checks one swaps.
   */
  private async rehash (user: User, password: string, context: RequestContext): Promise<void> {
    const { store, hasher, audit } = this.options
    const swapped = await store.users.setPasswordHash(user.id, await hasher.hash(password), new Date().toISOString(), user.passwordHash)
    if (swapped) audit({ event: 'password_rehashed', actorId: user.id, userId: user.id, detail: algorithmOf(user.passwordHash) }, context)
  }
}
