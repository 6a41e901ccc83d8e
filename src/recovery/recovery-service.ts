import type { AuditSink, RequestContext } from '../events.js'
import type { RecoveryConfig } from '../config/recovery.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidOtp, InvalidResetToken, MfaRequired } from '../errors.js'
import type { CoreLogger } from '../logging/logger.js'
import { emailCodeMail, passwordChangedMail, passwordResetMail } from '../mail/templates.js'
import { newEmailCode, newResetToken, sameHash, type SecretHasher } from '../crypto/one-time-secrets.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { CounterStore } from '../limits/throttle.js'
import type { TwoFactorService } from '../two-factor/two-factor-service.js'
import { normalizeEmail } from '../accounts/users.js'

export type CodePurpose = 'login' | 'verify_email'

/** What a correct email code did: a sign-in (the pair) or a confirmed address. */
export type CodeOutcome = { purpose: 'login', pair: TokenPair } | { purpose: 'verify_email' }

/** At most one reset mail per address in this window, whatever the requests (the further ones are silent). */
const RESET_MAIL_WINDOW_MS = 60_000

const iso = (ms: number) => new Date(ms).toISOString()
const minutes = (seconds: number) => Math.max(1, Math.round(seconds / 60))

/**
 * Password reset by email and email codes (docs/recovery.md). Requests for a mail answer before
 * any work that depends on the address: the caller answers, then the lookup, the secret and the
 * outbox row happen here in the background, tracked so a shutdown waits for them (`settled`).
 */
export class RecoveryService {
  private readonly pending = new Set<Promise<void>>()

  constructor (
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly secrets: SecretHasher,
    private readonly sessions: SessionService,
    private readonly counters: CounterStore,
    private readonly settings: Pick<RecoveryConfig, 'passwordReset' | 'emailOtp' | 'emailOtpMaxAttempts'>,
    private readonly audit: AuditSink,
    private readonly log: Pick<CoreLogger, 'warn'>,
    /** told once a transaction that queued mail has committed, so the sender delivers it at once */
    private readonly queued: () => void = () => {},
    /** TOTP (ENABLE_TOTP): a reset needs a code, an email-code sign-in ends in the challenge */
    private readonly twoFactor?: TwoFactorService
  ) {}

  /** forgot-password: queues a reset mail for an existing account, at most one per address per minute. */
  requestReset (email: string, context: RequestContext): void {
    const reset = this.settings.passwordReset
    if (reset === undefined) return
    this.track(async () => {
      const normalized = normalizeEmail(email)
      const user = await this.store.users.findByEmail(normalized)
      if (user === undefined) return this.audit({ event: 'password_reset_requested', outcome: 'failure', email: normalized, detail: 'unknown address' }, context)
      const slot = await this.counters.reserve(`reset-mail:${normalized}`, 1, RESET_MAIL_WINDOW_MS)
      if (!slot.allowed) return this.audit({ event: 'password_reset_requested', outcome: 'failure', userId: user.id, detail: 'one mail per minute' }, context)
      const token = newResetToken()
      const now = Date.now()
      // the minute's allowance counts a mail written, not a request: a failed write gives it back (track logs it), so a retry goes out
      await this.store.transaction(async (tx) => {
        await tx.oneTimeSecrets.issue({
          userId: user.id,
          purpose: 'reset',
          secretHash: this.secrets.resetHash(token),
          credentialsVersion: user.credentialsVersion,
          createdAt: iso(now),
          expiresAt: iso(now + reset.ttl * 1000)
        }, false)
        const link = reset.url.replaceAll('{token}', token)
        await tx.mailOutbox.enqueue(passwordResetMail({ to: user.email, link, expiresInMinutes: minutes(reset.ttl) }))
      }).catch(async (err: unknown) => {
        await this.counters.release(`reset-mail:${normalized}`)
        throw err
      })
      this.queued()
      this.audit({ event: 'password_reset_requested', userId: user.id }, context)
    })
  }

  /**
   * reset-password: one statement spends the token (of two requests with it, one wins), then in
   * the same transaction the password changes, every session of the user ends, every other
   * token and code of theirs is spent and a notice is queued. Nobody is signed in.
   */
  async resetPassword (token: string, newPassword: string, code: string | undefined, context: RequestContext): Promise<void> {
    const hash = this.secrets.resetHash(token)
    // a cheap look first, so a made-up token costs no argon2
    const userId = await this.store.oneTimeSecrets.findLiveReset(hash, iso(Date.now()))
    const user = userId === undefined ? undefined : await this.store.users.findById(userId)
    if (user === undefined) return this.resetFailed(context)
    // a user with TOTP on adds a current code or a recovery code; each wrong one counts on the token
    if (this.twoFactor !== undefined && await this.twoFactor.isEnabled(user.id) && !await this.twoFactor.provesWithCode(user.id, code)) {
      await this.store.oneTimeSecrets.countResetFailure(hash, this.settings.emailOtpMaxAttempts, iso(Date.now()))
      this.audit({ event: 'password_reset_failed', outcome: 'failure', userId: user.id, detail: 'second factor missing or wrong' }, context)
      throw new MfaRequired()
    }
    const passwordHash = await this.hasher.hash(newPassword)
    const changed = await this.store.transaction(async (tx) => {
      const now = iso(Date.now())
      const spentBy = await tx.oneTimeSecrets.consumeReset(hash, now)
      if (spentBy === undefined) return undefined
      await tx.users.setPasswordHash(spentBy, passwordHash, now)
      await this.sessions.revoke({ userId: spentBy }, { reason: 'password_reset' }, context, tx)
      await tx.oneTimeSecrets.spendAllOf(spentBy, now)
      await tx.mailOutbox.enqueue(passwordChangedMail({ to: user.email }))
      return spentBy
    })
    if (changed === undefined) return this.resetFailed(context)
    this.queued()
    this.audit({ event: 'password_reset_completed', userId: changed }, context)
  }

  private resetFailed (context: RequestContext): never {
    this.audit({ event: 'password_reset_failed', outcome: 'failure' }, context)
    throw new InvalidResetToken()
  }

  /** send-otp: a fresh code for an existing account, replacing its previous code of that purpose. */
  requestCode (email: string, purpose: CodePurpose, context: RequestContext): void {
    const otp = this.settings.emailOtp
    if (otp === undefined) return
    this.track(async () => {
      const normalized = normalizeEmail(email)
      const user = await this.store.users.findByEmail(normalized)
      if (user === undefined) return this.audit({ event: 'email_code_requested', outcome: 'failure', email: normalized, detail: `${purpose}: unknown address` }, context)
      const code = newEmailCode()
      const now = Date.now()
      await this.store.transaction(async (tx) => {
        await tx.oneTimeSecrets.issue({
          userId: user.id,
          purpose,
          secretHash: this.secrets.codeHash(user.id, purpose, code),
          credentialsVersion: user.credentialsVersion,
          createdAt: iso(now),
          expiresAt: iso(now + otp.ttl * 1000)
        }, true)
        await tx.mailOutbox.enqueue(emailCodeMail({ to: user.email, code, purpose, expiresInMinutes: minutes(otp.ttl) }))
      })
      this.queued()
      this.audit({ event: 'email_code_requested', userId: user.id, detail: purpose }, context)
    })
  }

  /**
   * verify-otp: an attempt is counted on the live code before it is compared, so concurrent
   * guesses cannot outrun EMAIL_OTP_MAX_ATTEMPTS; the attempt that uses the last one spends it.
   */
  async verifyCode (email: string, code: string, purpose: CodePurpose, context: RequestContext, remember = false): Promise<CodeOutcome> {
    const otp = this.settings.emailOtp
    const user = await this.store.users.findByEmail(normalizeEmail(email))
    if (otp === undefined || user === undefined) return this.codeFailed(undefined, purpose, context)
    const now = iso(Date.now())
    const reserved = await this.store.oneTimeSecrets.reserveAttempt(user.id, purpose, otp.maxAttempts, now)
    if (reserved === undefined) return this.codeFailed(user, purpose, context)
    if (!sameHash(reserved.secretHash, this.secrets.codeHash(user.id, purpose, code))) {
      if (reserved.attempts >= otp.maxAttempts) await this.store.oneTimeSecrets.spend(reserved.id, now)
      return this.codeFailed(user, purpose, context)
    }
    if (!await this.store.oneTimeSecrets.spend(reserved.id, now)) return this.codeFailed(user, purpose, context)
    return await this.codeAccepted(user, purpose, context, remember)
  }

  private async codeAccepted (user: User, purpose: CodePurpose, context: RequestContext, remember: boolean): Promise<CodeOutcome> {
    if (purpose === 'verify_email') {
      await this.store.users.markEmailVerified(user.id, iso(Date.now()))
      this.audit({ event: 'email_verified', actorId: user.id, userId: user.id }, context)
      return { purpose }
    }
    // a user with TOTP on gets the mfa_required challenge instead of a session
    if (this.twoFactor !== undefined && await this.twoFactor.isEnabled(user.id)) return await this.twoFactor.challenge(user, 'email', remember)
    const pair = await this.sessions.start(user, context, 'email')
    this.audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: 'email code' }, context)
    return { purpose, pair }
  }

  private codeFailed (user: User | undefined, purpose: CodePurpose, context: RequestContext): never {
    this.audit({ event: 'email_code_failed', outcome: 'failure', userId: user?.id, detail: purpose }, context)
    throw new InvalidOtp()
  }

  /** Runs `work` after the current turn (the answer goes first), logging its failure; `settled` waits for it. */
  private track (work: () => Promise<void>): void {
    const done: Promise<void> = new Promise<void>((resolve) => { setImmediate(resolve) })
      .then(work)
      .catch((err: unknown) => { this.log.warn({ err }, 'account recovery: a mail request failed, no mail was queued') })
      .finally(() => { this.pending.delete(done) })
    this.pending.add(done)
  }

  /** Resolves once every request taken so far has written its secret and mail (graceful shutdown). */
  async settled (): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }
}
