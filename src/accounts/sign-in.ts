import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import { InvalidCredentials, InvalidPassword, TokenRevoked } from '../errors.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { AuthThrottles } from '../limits/throttle.js'
import type { Claims } from '../tokens/claims.js'
import type { TwoFactorService } from '../two-factor/two-factor-service.js'
import { normalizeEmail, type NewAccount, type UserService } from './users.js'

/** The failure throttles: sign-in per email and address, the current password per user and address. */

/** Email-and-password sign-in and self-registration. */
export class AuthService {
  constructor (
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly audit: AuditSink,
    private readonly throttles: AuthThrottles,
    /** TOTP (ENABLE_TOTP): a user with a factor gets a challenge instead of a session */
    private readonly twoFactor?: TwoFactorService
  ) {}

  /**
   * Unknown email and wrong password give the same error after the same argon2 work. A user with
   * TOTP on gets the 403 mfa_required challenge (remembering `remember` for its end), no session.
   */
  async login (email: string, password: string, context: RequestContext, remember = false): Promise<TokenPair> {
    const normalized = normalizeEmail(email)
    const { user, ok } = await this.throttles.login.attempt(`login:${normalized}`, context.ip, async () => {
      const user = await this.store.users.findByEmail(normalized)
      return { user, ok: await this.hasher.verify(user?.passwordHash, password) }
    })
    if (!ok || user === undefined) {
      this.audit({ event: 'login_failed', outcome: 'failure', email: normalized, userId: user?.id }, context)
      throw new InvalidCredentials()
    }
    if (this.hasher.needsRehash(user.passwordHash)) {
      // only over the hash just verified: a password changed meanwhile must not be reverted
      await this.store.users.setPasswordHash(user.id, await this.hasher.hash(password), new Date().toISOString(), user.passwordHash)
    }
    if (this.twoFactor !== undefined && await this.twoFactor.isEnabled(user.id)) return await this.twoFactor.challenge(user, 'pwd', remember)
    const pair = await this.sessions.start(user, context)
    this.audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId }, context)
    return pair
  }

  async register (account: Omit<NewAccount, 'isSuperuser'>, context: RequestContext): Promise<TokenPair> {
    const user = await this.users.create({ ...account, isSuperuser: false })
    const pair = await this.sessions.start(user, context)
    this.audit({ event: 'registered', actorId: user.id, userId: user.id, sessionId: pair.sessionId }, context)
    return pair
  }

  /**
   * A new password ends every other session of the user; the caller's own keeps working. The
   * new hash is made before the transaction opens: argon2 waits its turn on libuv's pool, and
   * a transaction held meanwhile would hold SQLite's one connection from every other request.
   */
  async changePassword (caller: Claims, currentPassword: string, newPassword: string, context: RequestContext): Promise<void> {
    const user = await this.store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    const { ok } = await this.throttles.password.attempt(`password:${user.id}`, context.ip, async () => ({ ok: await this.hasher.verify(user.passwordHash, currentPassword) }))
    if (!ok) {
      this.audit({ event: 'password_change_failed', outcome: 'failure', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
      throw new InvalidPassword()
    }
    const passwordHash = await this.hasher.hash(newPassword)
    await this.store.transaction(async (tx) => {
      await tx.users.setPasswordHash(user.id, passwordHash, new Date().toISOString())
      await this.sessions.revoke({ userId: user.id, exceptSessionId: caller.session_id }, { reason: 'password_changed', actorId: user.id }, context, tx)
    })
    this.audit({ event: 'password_changed', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
  }
}
