import type { AuditSink, RequestContext } from '../events.js'
import type { RecoveryConfig } from '../config/recovery.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidOtp, InvalidResetToken, MfaRequired } from '../errors.js'
import type { SignInOutcome } from '../accounts/sign-in.js'
import type { CoreLogger } from '../logging/logger.js'
import { emailCodeMail, passwordChangedMail, passwordResetMail } from '../mail/templates.js'
import { newEmailCode, newResetToken, sameHash, type SecretHasher } from '../crypto/one-time-secrets.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService } from '../sessions/session-service.js'
import type { CounterStore, FailureThrottle } from '../limits/throttle.js'
import { AccountBound } from '../limits/account-bound.js'
import type { ServiceEvents } from '../events.js'
import type { FactorProof, TwoFactorService } from '../two-factor/two-factor-service.js'
import { normalizeEmail } from '../accounts/users.js'

export type CodePurpose = 'login' | 'verify_email'

export type CodeOutcome = ({ purpose: 'login' } & SignInOutcome) | { purpose: 'verify_email' }

export interface CodeAttempt { email: string, code: string, purpose: CodePurpose, remember?: boolean | undefined }

export interface RecoveryServiceOptions {
  store: Store
  hasher: PasswordHasher
  secrets: SecretHasher
  sessions: SessionService
  counters: CounterStore
  settings: Pick<RecoveryConfig, 'passwordReset' | 'emailOtp' | 'emailOtpMaxAttempts'>
  audit: AuditSink
  log: Pick<CoreLogger, 'warn'>
  queued?: (() => void) | undefined
  twoFactor?: TwoFactorService | undefined
  signIns?: FailureThrottle | undefined
  events?: ServiceEvents | undefined
}

// an unknown address costs what a known one does (one reserve, one keyed hash, one comparison)
const NO_USER = '00000000-0000-0000-0000-000000000000'
const NO_HASH = '-'.repeat(43)

class RecoveryCodeSpent extends Error {}

const RESET_MAIL_WINDOW_MS = 60_000

const iso = (ms: number) => new Date(ms).toISOString()
const minutes = (seconds: number) => Math.max(1, Math.round(seconds / 60))

/**
 * Password reset by email and email codes (docs/recovery.md). The caller answers before any work
 * that depends on the address, so timing tells nothing; that work is tracked for shutdown.
 */
export class RecoveryService {
  private readonly pending = new Set<Promise<void>>()
  private readonly store: Store
  private readonly hasher: PasswordHasher
  private readonly secrets: SecretHasher
  private readonly sessions: SessionService
  private readonly counters: CounterStore
  private readonly settings: RecoveryServiceOptions['settings']
  private readonly audit: AuditSink
  private readonly log: Pick<CoreLogger, 'warn'>
  private readonly queued: () => void
  private readonly twoFactor: TwoFactorService | undefined
  private readonly signIns: FailureThrottle | undefined
  private readonly codeFailures: AccountBound

  constructor (options: RecoveryServiceOptions) {
    this.store = options.store
    this.hasher = options.hasher
    this.secrets = options.secrets
    this.sessions = options.sessions
    this.counters = options.counters
    this.settings = options.settings
    this.audit = options.audit
    this.log = options.log
    this.twoFactor = options.twoFactor
    this.signIns = options.signIns
    const failures = options.settings.emailOtp?.accountFailures ?? { max: 1, window: 1 }
    this.codeFailures = new AccountBound({ store: options.counters, max: failures.max, windowMs: failures.window * 1000, name: 'email_code_failures', events: options.events })
    this.queued = options.queued ?? (() => {})
  }

  requestReset (email: string, context: RequestContext): void {
    const reset = this.settings.passwordReset
    if (reset === undefined) return
    this.track(async () => {
      const normalized = normalizeEmail(email)
      const user = await this.store.users.findByEmail(normalized)
      // a service account has no password to reset and no mailbox: answered as an unknown address
      if (user === undefined || user.kind === 'service') return this.audit({ event: 'password_reset_requested', outcome: 'failure', email: normalized, detail: 'unknown address' }, context)
      const slot = await this.counters.reserve(`reset-mail:${normalized}`, 1, RESET_MAIL_WINDOW_MS)
      if (!slot.allowed) return this.audit({ event: 'password_reset_requested', outcome: 'failure', userId: user.id, detail: 'one mail per minute' }, context)
      const token = newResetToken()
      const now = Date.now()
      // a failed write gives the allowance back, so a retry goes out
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
   * One statement spends the token (of two requests, one wins). With TOTP, an attempt is reserved
   * before the code is checked; a recovery code is spent only inside the transaction, after the token.
   */
  async resetPassword (token: string, newPassword: string, code: string | undefined, context: RequestContext): Promise<void> {
    const hash = this.secrets.resetHash(token)
    // a cheap look first, so a made-up token costs no argon2
    const userId = await this.store.oneTimeSecrets.findLiveReset(hash, iso(Date.now()))
    const user = userId === undefined ? undefined : await this.store.users.findById(userId)
    if (user === undefined) return this.resetFailed(context)
    const proof = await this.secondFactorOf(user, hash, code, context)
    const passwordHash = await this.hasher.hash(newPassword)
    const changed = await this.store.transaction(async (tx) => {
      const now = iso(Date.now())
      const spentBy = await tx.oneTimeSecrets.consumeReset(hash, now)
      if (spentBy === undefined) return undefined
      if (proof?.recoveryCode !== undefined && !await this.twoFactor?.spendRecoveryCode(tx, spentBy, proof.recoveryCode)) throw new RecoveryCodeSpent()
      await tx.users.setPasswordHash(spentBy, passwordHash, now)
      await this.sessions.revoke({ userId: spentBy }, { reason: 'password_reset' }, context, tx)
      await tx.oneTimeSecrets.spendAllOf(spentBy, now)
      await tx.mailOutbox.enqueue(passwordChangedMail({ to: user.email }))
      return spentBy
    }).catch((err: unknown) => {
      if (err instanceof RecoveryCodeSpent) return this.secondFactorFailed(user, context)
      throw err
    })
    if (changed === undefined) return this.resetFailed(context)
    this.queued()
    this.audit({ event: 'password_reset_completed', userId: changed }, context)
  }

  private async secondFactorOf (user: User, hash: string, code: string | undefined, context: RequestContext): Promise<FactorProof | undefined> {
    if (this.twoFactor === undefined || !await this.twoFactor.isEnabled(user.id)) return undefined
    const max = this.settings.emailOtpMaxAttempts
    const attempt = await this.store.oneTimeSecrets.reserveResetAttempt(hash, max, iso(Date.now()))
    if (attempt === undefined) return this.resetFailed(context)
    const proof = await this.twoFactor.checkResetCode(user, code)
    if (proof !== undefined) return proof
    if (attempt.attempts >= max) await this.store.oneTimeSecrets.spend(attempt.id, iso(Date.now()))
    return this.secondFactorFailed(user, context)
  }

  private secondFactorFailed (user: User, context: RequestContext): never {
    this.audit({ event: 'password_reset_failed', outcome: 'failure', userId: user.id, detail: 'second factor missing or wrong' }, context)
    throw new MfaRequired()
  }

  private resetFailed (context: RequestContext): never {
    this.audit({ event: 'password_reset_failed', outcome: 'failure' }, context)
    throw new InvalidResetToken()
  }

  requestCode (email: string, purpose: CodePurpose, context: RequestContext): void {
    const otp = this.settings.emailOtp
    if (otp === undefined) return
    this.track(async () => {
      const normalized = normalizeEmail(email)
      const user = await this.store.users.findByEmail(normalized)
      if (user === undefined || user.kind === 'service') return this.audit({ event: 'email_code_requested', outcome: 'failure', email: normalized, detail: `${purpose}: unknown address` }, context)
      const allowance = await this.mailAllowed(normalized, otp.accountMails, context)
      if (allowance === false) return this.audit({ event: 'email_code_requested', outcome: 'failure', userId: user.id, detail: `${purpose}: account mail bound` }, context)
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
      }).catch(async (err: unknown) => {
        if (allowance === 'reserved') await this.counters.release(`code-mail:${normalized}`)
        throw err
      })
      this.queued()
      this.audit({ event: 'email_code_requested', userId: user.id, detail: purpose }, context)
    })
  }

  /** Always from an address the account signed in from, else within the bound: nobody can flood the mailbox. */
  private async mailAllowed (email: string, bound: { max: number, window: number }, context: RequestContext): Promise<'own' | 'reserved' | false> {
    if (await this.signIns?.isOwn(`login:${email}`, context.ip) === true) return 'own'
    return (await this.counters.reserve(`code-mail:${email}`, bound.max, bound.window * 1000)).allowed ? 'reserved' : false
  }

  /**
   * The attempt is counted before the comparison, so concurrent guesses cannot outrun the limit;
   * an unknown address counts too, so a 429 tells nothing about which accounts exist.
   */
  async verifyCode ({ email, code, purpose, remember = false }: CodeAttempt, context: RequestContext): Promise<CodeOutcome> {
    const otp = this.settings.emailOtp
    const normalized = normalizeEmail(email)
    const user = await this.store.users.findByEmail(normalized)
    if (otp === undefined) return this.codeFailed(undefined, purpose, context)
    const slot = await this.codeFailures.reserve(normalized)
    if (!slot.allowed) this.codeFailures.refuse(slot)
    const matched = await this.codeMatches(user?.id ?? NO_USER, { code, purpose }, otp.maxAttempts)
    if (user === undefined || !matched) return this.codeFailed(user, purpose, context)
    await this.codeFailures.release(normalized, slot)
    return await this.codeAccepted(user, purpose, context, remember)
  }

  /** An unknown address (NO_USER) runs the same statement and comparison, so it takes the same time. */
  private async codeMatches (userId: string, { code, purpose }: { code: string, purpose: CodePurpose }, maxAttempts: number): Promise<boolean> {
    const now = iso(Date.now())
    const reserved = await this.store.oneTimeSecrets.reserveAttempt(userId, purpose, maxAttempts, now)
    const matches = sameHash(reserved?.secretHash ?? NO_HASH, this.secrets.codeHash(userId, purpose, code))
    if (reserved === undefined) return false
    if (!matches) {
      if (reserved.attempts >= maxAttempts) await this.store.oneTimeSecrets.spend(reserved.id, now)
      return false
    }
    return await this.store.oneTimeSecrets.spend(reserved.id, now)
  }

  private async codeAccepted (user: User, purpose: CodePurpose, context: RequestContext, remember: boolean): Promise<CodeOutcome> {
    if (purpose === 'verify_email') {
      await this.store.users.markEmailVerified(user.id, iso(Date.now()))
      this.audit({ event: 'email_verified', actorId: user.id, userId: user.id }, context)
      return { purpose }
    }
    if (this.twoFactor !== undefined && await this.twoFactor.isEnabled(user.id)) {
      return { purpose, status: 'second_factor_required', challenge: await this.twoFactor.challenge(user, 'email', remember, context) }
    }
    const pair = await this.sessions.start(user, context, 'email')
    this.audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: 'email code' }, context)
    return { purpose, status: 'signed_in', pair }
  }

  private codeFailed (user: User | undefined, purpose: CodePurpose, context: RequestContext): never {
    this.audit({ event: 'email_code_failed', outcome: 'failure', userId: user?.id, detail: purpose }, context)
    throw new InvalidOtp()
  }

  private track (work: () => Promise<void>): void {
    const done: Promise<void> = new Promise<void>((resolve) => { setImmediate(resolve) })
      .then(work)
      .catch((err: unknown) => { this.log.warn({ err }, 'account recovery: a mail request failed, no mail was queued') })
      .finally(() => { this.pending.delete(done) })
    this.pending.add(done)
  }

  async settled (): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }
}
