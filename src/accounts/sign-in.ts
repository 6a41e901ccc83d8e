import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import { InvalidCredentials, InvalidPassword, TokenRevoked } from '../errors.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { AuthThrottles } from '../limits/throttle.js'
import type { Claims } from '../tokens/claims.js'
import type { SecondFactorChallenge, TwoFactorService } from '../two-factor/two-factor-service.js'
import { normalizeEmail, type NewAccount, type UserService } from './users.js'

export interface AuthServiceOptions {
  store: Store
  hasher: PasswordHasher
  users: UserService
  sessions: SessionService
  audit: AuditSink
  /** the failure throttles: sign-in per email and address, the current password per user and address */
  throttles: AuthThrottles
  /** TOTP (ENABLE_TOTP): a user with a factor gets a challenge instead of a session */
  twoFactor?: TwoFactorService | undefined
}

/**
 * What a right first factor earns: a session, or — for an account with a second factor — the
 * challenge that finishes the sign-in. An answer either way, not an error (better-auth's
 * `twoFactorRedirect`); the route shapes the challenge as the 403 mfa_required body.
 */
export type SignInOutcome =
  | { status: 'signed_in', pair: TokenPair }
  | { status: 'second_factor_required', challenge: SecondFactorChallenge }

/** Email-and-password sign-in and self-registration. */
export class AuthService {
  constructor (private readonly options: AuthServiceOptions) {}

  /**
   * Unknown email and wrong password give the same error after the same argon2 work. A user with
   * TOTP on gets the challenge (remembering `remember` for its end), no session: for the failure
   * throttle that right password is neither a failure nor a success — only a completed sign-in
   * resets the count and makes the address the user's own.
   */
  async login (email: string, password: string, context: RequestContext, remember = false): Promise<SignInOutcome> {
    const { store, hasher, sessions, audit, throttles, twoFactor } = this.options
    const normalized = normalizeEmail(email)
    const { user, ok, pending } = await throttles.login.attempt(`login:${normalized}`, context.ip, async () => {
      const user = await store.users.findByEmail(normalized)
      const ok = await hasher.verify(user?.passwordHash, password)
      return { user, ok, pending: ok && user !== undefined && twoFactor !== undefined && await twoFactor.isEnabled(user.id) }
    })
    if (!ok || user === undefined) {
      audit({ event: 'login_failed', outcome: 'failure', email: normalized, userId: user?.id }, context)
      throw new InvalidCredentials()
    }
    if (hasher.needsRehash(user.passwordHash)) {
      // only over the hash just verified: a password changed meanwhile must not be reverted
      await store.users.setPasswordHash(user.id, await hasher.hash(password), new Date().toISOString(), user.passwordHash)
    }
    if (pending && twoFactor !== undefined) return { status: 'second_factor_required', challenge: await twoFactor.challenge(user, 'pwd', remember, context) }
    const pair = await sessions.start(user, context)
    audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId }, context)
    return { status: 'signed_in', pair }
  }

  async register (account: Omit<NewAccount, 'isSuperuser'>, context: RequestContext): Promise<TokenPair> {
    const { users, sessions, audit } = this.options
    const user = await users.create({ ...account, isSuperuser: false })
    const pair = await sessions.start(user, context)
    audit({ event: 'registered', actorId: user.id, userId: user.id, sessionId: pair.sessionId }, context)
    return pair
  }

  /**
   * A new password ends every other session of the user; the caller's own keeps working. The
   * new hash is made before the transaction opens: argon2 waits its turn on libuv's pool, and
   * a transaction held meanwhile would hold SQLite's one connection from every other request.
   */
  async changePassword (caller: Claims, currentPassword: string, newPassword: string, context: RequestContext): Promise<void> {
    const { store, hasher, sessions, audit, throttles } = this.options
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    const { ok } = await throttles.password.attempt(`password:${user.id}`, context.ip, async () => ({ ok: await hasher.verify(user.passwordHash, currentPassword) }))
    if (!ok) {
      audit({ event: 'password_change_failed', outcome: 'failure', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
      throw new InvalidPassword()
    }
    const passwordHash = await hasher.hash(newPassword)
    await store.transaction(async (tx) => {
      await tx.users.setPasswordHash(user.id, passwordHash, new Date().toISOString())
      await sessions.revoke({ userId: user.id, exceptSessionId: caller.session_id }, { reason: 'password_changed', actorId: user.id }, context, tx)
    })
    audit({ event: 'password_changed', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
  }
}
