import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import { InvalidCredentials, InvalidPassword, TokenRevoked } from '../errors.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { AuthThrottles } from '../limits/throttle.js'
import type { Claims } from '../tokens/claims.js'
import type { SecondFactorChallenge, TwoFactorService } from '../two-factor/two-factor-service.js'
import { normalizeEmail, type NewAccount, type UserService } from './users.js'
import type { PasswordCheck } from './password-check.js'

export interface AuthServiceOptions {
  store: Store
  hasher: PasswordHasher
  /** the sign-in's password check, which rehashes a legacy hash after a right password */
  passwords: PasswordCheck
  users: UserService
  sessions: SessionService
  audit: AuditSink
  throttles: AuthThrottles
  twoFactor?: TwoFactorService | undefined
}

/** Either answer is not an error; the route shapes the challenge as the 403 mfa_required body. */
export type SignInOutcome =
  | { status: 'signed_in', pair: TokenPair }
  | { status: 'second_factor_required', challenge: SecondFactorChallenge }

export class AuthService {
  constructor (private readonly options: AuthServiceOptions) {}

  /**
   * Unknown email and wrong password give the same error after the same argon2 work. A right
   * password that only earns the challenge is, for the throttle, neither failure nor success.
   */
  async login (email: string, password: string, context: RequestContext, remember = false): Promise<SignInOutcome> {
    const { store, passwords, sessions, audit, throttles, twoFactor } = this.options
    const normalized = normalizeEmail(email)
    const { user, ok, pending } = await throttles.login.attempt(`login:${normalized}`, context.ip, async () => {
      const user = await store.users.findByEmail(normalized)
      const ok = await passwords.verify(user, password, context)
      return { user, ok, pending: ok && user !== undefined && twoFactor !== undefined && await twoFactor.isEnabled(user.id) }
    })
    if (!ok || user === undefined) {
      audit({ event: 'login_failed', outcome: 'failure', email: normalized, userId: user?.id }, context)
      throw new InvalidCredentials()
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
   * The new hash is made before the transaction opens: argon2 waits on libuv's pool, and a held
   * transaction would block SQLite's one connection for every other request. The current
   * password's check does not rehash a legacy hash: the new password's argon2id replaces it just
   * below, so a rehash first would be work thrown away.
   */
  async changePassword (caller: Claims, currentPassword: string, newPassword: string, context: RequestContext): Promise<void> {
    const { store, hasher, passwords, sessions, audit } = this.options
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    if (!await passwords.counted(user, currentPassword, context, { rehash: false })) {
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
