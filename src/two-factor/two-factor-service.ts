import { randomBytes, randomInt } from 'node:crypto'
import { KeyedHash } from '../crypto/keyed-hash.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { DataKey, Envelope } from '../crypto/envelope.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidOtp, InvalidPassword, NotFound, TokenRevoked, TotpAlreadyEnabled } from '../errors.js'
import { securityNoticeMail } from '../mail/templates.js'
import type { PasswordHasher } from '../crypto/passwords.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { AuthThrottles } from '../limits/throttle.js'
import type { AccountBound } from '../limits/account-bound.js'
import { MFA_METHODS, type MfaMethod } from '../../schemas/two-factor.js'
import { secondFactorStrength, type Claims, type SignInMethod } from '../tokens/claims.js'
import { matchingStep, newTotpSecret, otpauthUri, qrSvg } from './totp.js'

/** A challenge lives this long and takes this many wrong codes. */
export const CHALLENGE_TTL_SECONDS = 300
export const CHALLENGE_MAX_ATTEMPTS = 5
const RECOVERY_CODES = 10
/** 32 letters and digits without 0/o, 1/l/i: ten of them carry 50 bits */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

/** A second factor given with a request: a current TOTP code or a recovery code. */
export interface FactorProof { code?: string | undefined, recoveryCode?: string | undefined }

export interface Enrolment { secret: string, otpauthUri: string, qrSvg: string }

/** A right first factor of a user with a second one: the challenge that finishes the sign-in (the body is schemas/two-factor.ts MfaChallenge). */
export interface SecondFactorChallenge { mfaToken: string, expiresIn: number, methods: readonly MfaMethod[] }

export interface TwoFactorOptions {
  store: Store
  hasher: PasswordHasher
  sessions: SessionService
  envelope: Envelope
  /** DATA_ENCRYPTION_KEYS, the first the current one: recovery codes are keyed with a key derived from it */
  dataKeys: DataKey[]
  throttles: AuthThrottles
  /** wrong second-factor codes per account, from every address (SECOND_FACTOR_MAX_FAILURES) */
  bound: AccountBound
  audit: AuditSink
  /** TOTP_ISSUER */
  issuer: string
  /** whether a notice mail is queued for each change (mail configured) */
  notify: boolean
  /** told once a transaction that queued mail has committed */
  queued: () => void
  /** this instance's wall clock, ms: which time step is current */
  clock: () => number
}

const iso = (ms: number) => new Date(ms).toISOString()

/** What a recovery code's HMAC is taken of: bound to its user, without case, dashes or spaces, as people type them. */
function recoveryInput (userId: string, code: string): string {
  return `recovery\0${userId}\0${code.toLowerCase().replace(/[\s-]/g, '')}`
}

/** Ten recovery codes, `xxxxx-xxxxx`, uniformly drawn. */
function newRecoveryCodes (): string[] {
  const one = () => Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('')
  return Array.from({ length: RECOVERY_CODES }, () => one().replace(/^(.{5})/, '$1-'))
}

/**
 * TOTP two-factor sign-in (docs/two-factor.md). The secret is sealed with DATA_ENCRYPTION_KEYS,
 * bound to its user; recovery codes and challenge tokens are kept as HMACs under a key derived
 * from JWT_SECRET for this use alone. Each time step is accepted once per user by one
 * conditional update of the factor's last step, so concurrent requests with one code get one success.
 */
export class TwoFactorService {
  private readonly hash: KeyedHash
  /** one keyed hash per data encryption key, the current one first */
  private readonly recoveryKeys: Array<{ id: string, hash: KeyedHash }>

  constructor (private readonly options: TwoFactorOptions, jwtSecret: string) {
    this.hash = new KeyedHash(jwtSecret, 'gatehouse second factor')
    this.recoveryKeys = options.dataKeys.map(({ id, key }) => ({ id, hash: new KeyedHash(key, 'gatehouse recovery codes') }))
  }

  /** Whether the user signs in with a second factor (an active one; a pending factor does not count). */
  async isEnabled (userId: string): Promise<boolean> {
    return (await this.options.store.totp.find(userId))?.state === 'active'
  }

  /** enable-2fa: a pending factor, replacing a pending one; refused once a factor is active. */
  async enroll (caller: Claims, password: string, context: RequestContext): Promise<Enrolment> {
    const user = await this.checkPassword(caller, password, context)
    if (await this.isEnabled(user.id)) throw new TotpAlreadyEnabled()
    const secret = newTotpSecret()
    const stored = await this.options.store.totp.putPending(user.id, this.seal(user.id, secret), iso(Date.now()))
    if (!stored) throw new TotpAlreadyEnabled()
    const uri = otpauthUri(secret, this.options.issuer, user.email)
    return { secret, otpauthUri: uri, qrSvg: await qrSvg(uri) }
  }

  /**
   * verify-2fa with an access token: the first code makes the pending factor active, ten recovery
   * codes replace any old ones, every other session of the user ends and this one continues at aal2.
   */
  async activate (caller: Claims, code: string, context: RequestContext): Promise<{ recoveryCodes: string[], pair: TokenPair }> {
    const { store, sessions } = this.options
    const user = await store.users.findById(caller.user_id)
    const factor = user === undefined ? undefined : await store.totp.find(user.id)
    if (user === undefined || factor?.state !== 'pending') return this.failed(user?.id, 'no pending factor', context)
    const nowMs = this.options.clock()
    let step: number | undefined
    // enrolment counts against the account's bound too: the caller holds a session, not necessarily the phone
    const matched = await this.provesBounded(user, { code }, async () => (step = matchingStep(this.open(user.id, factor.sealedSecret), code, nowMs)) !== undefined)
    if (!matched || step === undefined) return this.failed(user.id, 'wrong code', context)
    const accepted = step
    const recoveryCodes = newRecoveryCodes()
    const activated = await store.transaction(async (tx) => {
      if (!await tx.totp.acceptStep({ userId: user.id, state: 'pending', step: accepted, now: iso(nowMs), activate: true })) return false
      // as a password change does: a sign-in that read the user before this commit stores no session
      await tx.users.bumpCredentialsVersion(user.id, iso(nowMs))
      await tx.totp.replaceRecoveryCodes(user.id, recoveryCodes.map((c) => this.recoveryHash(user.id, c)), iso(nowMs))
      await sessions.revoke({ userId: user.id, exceptSessionId: caller.session_id }, { reason: 'totp_enabled', actorId: user.id }, context, tx)
      await this.notice(tx, user, 'Two-factor sign-in was turned on for your account; every other session was signed out.')
      return true
    })
    if (!activated) return this.failed(user.id, 'code already used', context)
    this.mailQueued()
    this.options.audit({ event: 'totp_enabled', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
    const pair = await sessions.elevate(caller, user, secondFactorStrength(caller.amr, Math.floor(Date.now() / 1000)))
    return { recoveryCodes, pair }
  }

  /** A right first factor of a user with TOTP on: no session, a challenge (the 403 mfa_required answer) instead. */
  async challenge (user: User, method: SignInMethod, remember: boolean, context: RequestContext): Promise<SecondFactorChallenge> {
    const token = randomBytes(32).toString('base64url')
    const now = Date.now()
    await this.options.store.totp.createChallenge({
      tokenHash: this.mac(`challenge\0${token}`),
      userId: user.id,
      remember,
      amr: [method],
      createdAt: iso(now),
      expiresAt: iso(now + CHALLENGE_TTL_SECONDS * 1000)
    })
    this.options.audit({ event: 'mfa_challenge_issued', userId: user.id, detail: method }, context)
    return { mfaToken: token, expiresIn: CHALLENGE_TTL_SECONDS, methods: MFA_METHODS }
  }

  /**
   * verify-2fa with an mfa_token: an attempt is reserved on the challenge before the code is
   * checked, and the check runs inside the login throttle of the user's email, so wrong codes
   * count as failed sign-ins (and a right one completes the sign-in the password began), and
   * against the account's bound. The fifth wrong code spends the challenge.
   */
  async completeChallenge (mfaToken: string, proof: FactorProof, context: RequestContext): Promise<{ pair: TokenPair, remember: boolean }> {
    const { store } = this.options
    const reserved = await store.totp.reserveChallenge(this.mac(`challenge\0${mfaToken}`), CHALLENGE_MAX_ATTEMPTS, iso(Date.now()))
    const user = reserved === undefined ? undefined : await store.users.findById(reserved.userId)
    if (reserved === undefined || user === undefined) return this.failed(undefined, 'unknown, spent or expired challenge', context)
    if (!await this.provesCounted(user, proof, context)) {
      if (reserved.attempts >= CHALLENGE_MAX_ATTEMPTS) await store.totp.spendChallenge(reserved.id, iso(Date.now()))
      return this.failed(user.id, 'wrong code', context)
    }
    if (!await store.totp.spendChallenge(reserved.id, iso(Date.now()))) return this.failed(user.id, 'challenge spent', context)
    const pair = await this.options.sessions.start(user, context, reserved.amr[0] === 'email' ? 'email' : 'pwd', true)
    this.options.audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: 'second factor' }, context)
    return { pair, remember: reserved.remember }
  }

  /** recovery-codes: a new set of ten; the old set is void. */
  async regenerateRecoveryCodes (caller: Claims, password: string, code: string, context: RequestContext): Promise<string[]> {
    const user = await this.checkPassword(caller, password, context)
    if (!await this.provesCounted(user, { code }, context)) return this.failed(user.id, 'wrong code', context)
    const recoveryCodes = newRecoveryCodes()
    await this.options.store.transaction(async (tx) => {
      await tx.totp.replaceRecoveryCodes(user.id, recoveryCodes.map((c) => this.recoveryHash(user.id, c)), iso(Date.now()))
      await this.notice(tx, user, 'New recovery codes were made for your account; the old ones no longer work.')
    })
    this.mailQueued()
    this.options.audit({ event: 'recovery_codes_regenerated', actorId: user.id, userId: user.id, sessionId: caller.session_id }, context)
    return recoveryCodes
  }

  /** disable-2fa: the factor, its recovery codes and open challenges go. */
  async disable (caller: Claims, password: string, proof: FactorProof, context: RequestContext): Promise<void> {
    const user = await this.checkPassword(caller, password, context)
    if (!await this.provesCounted(user, proof, context)) return this.failed(user.id, 'wrong code', context)
    await this.remove(user, user.id, context)
  }

  /** DELETE /api/users/:id/2fa: a superuser removes a user's factor (a lost phone and codes). */
  async disableFor (actorId: string, userId: string, context: RequestContext): Promise<void> {
    const user = await this.options.store.users.findById(userId)
    if (user === undefined) throw new NotFound('User not found')
    await this.remove(user, actorId, context)
  }

  /** Whether `proof` is a current unused TOTP code or an unused recovery code of the user (using it). */
  async proves (userId: string, proof: FactorProof): Promise<boolean> {
    const { store } = this.options
    const factor = await store.totp.find(userId)
    if (factor?.state !== 'active') return false
    const nowMs = this.options.clock()
    if (proof.code !== undefined) {
      const step = matchingStep(this.open(userId, factor.sealedSecret), proof.code, nowMs)
      return step !== undefined && await store.totp.acceptStep({ userId, state: 'active', step, now: iso(nowMs) })
    }
    if (proof.recoveryCode === undefined) return false
    return await store.totp.useRecoveryCode(userId, this.recoveryCandidates(userId, proof.recoveryCode), iso(nowMs))
  }

  /** `proves`, inside the login throttle of the user's email (a wrong code counts as a failed sign-in) and the account's bound. */
  private async provesCounted (user: User, proof: FactorProof, context: RequestContext): Promise<boolean> {
    const { ok } = await this.options.throttles.login.attempt(`login:${user.email}`, context.ip, async () => ({ ok: await this.provesBounded(user, proof) }))
    return ok
  }

  /**
   * A check of the second factor against the account's bound, the place reserved before the
   * check. Once the bound is reached a six-digit code is refused unchecked (429), so guessing
   * gains nothing; a recovery code (50 random bits, out of a guesser's reach) is still checked —
   * the real user's way past the lock — and a wrong one gets the same 429. The failure that
   * reaches the bound tells the user by mail.
   */
  private async provesBounded (user: User, proof: FactorProof, check = async () => await this.proves(user.id, proof)): Promise<boolean> {
    const { bound } = this.options
    const slot = await bound.reserve(user.id)
    if (!slot.allowed && proof.recoveryCode === undefined) bound.refuse(slot)
    if (await check()) {
      await bound.release(user.id, slot)
      return true
    }
    if (!slot.allowed) bound.refuse(slot)
    if (slot.count === bound.max) await this.boundReached(user, slot.resetAt)
    return false
  }

  private async boundReached (user: User, until: number): Promise<void> {
    const when = `${new Date(until).toISOString().slice(0, 16).replace('T', ' ')} UTC`
    await this.notice(this.options.store, user, `${this.options.bound.max} wrong two-factor codes were entered for your account, so whoever entered them ` +
      `knows your password. Codes from your authenticator app are refused until ${when}; a recovery code still works.`)
    this.mailQueued()
    this.options.audit({ event: 'totp_failed', outcome: 'failure', userId: user.id, detail: 'second-factor bound reached' }, { ip: 'system' })
  }

  /**
   * reset-password's second factor (six digits: a TOTP code, anything else a recovery code),
   * against the account's bound. A TOTP code is used now; a recovery code is only looked up, and
   * spent by `spendRecoveryCode` in the reset's own transaction, once its token is claimed: the
   * loser of two racing resets keeps its code. Undefined when missing or wrong.
   */
  async checkResetCode (user: User, code: string | undefined): Promise<FactorProof | undefined> {
    if (code === undefined) return undefined
    const proof: FactorProof = /^[0-9]{6}$/.test(code) ? { code } : { recoveryCode: code }
    const check = proof.code !== undefined
      ? async () => await this.proves(user.id, proof)
      : async () => await this.options.store.totp.hasRecoveryCode(user.id, this.recoveryCandidates(user.id, code))
    return await this.provesBounded(user, proof, check) ? proof : undefined
  }

  /** Spends a recovery code `checkResetCode` accepted, in the caller's transaction; false when it was used meanwhile. */
  async spendRecoveryCode (tx: Store, userId: string, code: string): Promise<boolean> {
    return await tx.totp.useRecoveryCode(userId, this.recoveryCandidates(userId, code), iso(this.options.clock()))
  }

  /** No factor, no change: nothing is mailed or audited (a superuser's DELETE on a user without one). */
  private async remove (user: User, actorId: string, context: RequestContext): Promise<void> {
    const removed = await this.options.store.transaction(async (tx) => {
      if (!await tx.totp.remove(user.id)) return false
      // a sign-in that read the user before this commit (and so expected a challenge) stores no session
      await tx.users.bumpCredentialsVersion(user.id, iso(Date.now()))
      await this.notice(tx, user, 'Two-factor sign-in was turned off for your account.')
      return true
    })
    if (!removed) return
    this.mailQueued()
    this.options.audit({ event: 'totp_disabled', actorId, userId: user.id }, context)
  }

  private async checkPassword (caller: Claims, password: string, context: RequestContext): Promise<User> {
    const { store, hasher, throttles } = this.options
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    const { ok } = await throttles.password.attempt(`password:${user.id}`, context.ip, async () => ({ ok: await hasher.verify(user.passwordHash, password) }))
    if (!ok) {
      this.options.audit({ event: 'totp_failed', outcome: 'failure', actorId: user.id, userId: user.id, detail: 'wrong password' }, context)
      throw new InvalidPassword()
    }
    return user
  }

  private async notice (tx: Store, user: User, what: string): Promise<void> {
    if (this.options.notify) await tx.mailOutbox.enqueue(securityNoticeMail({ to: user.email, what }))
  }

  private mailQueued (): void {
    if (this.options.notify) this.options.queued()
  }

  private failed (userId: string | undefined, detail: string, context: RequestContext): never {
    this.options.audit({ event: 'totp_failed', outcome: 'failure', userId, detail }, context)
    throw new InvalidOtp()
  }

  private seal (userId: string, secret: string): string {
    return this.options.envelope.seal(secret, `totp:${userId}`)
  }

  private open (userId: string, sealed: string): string {
    return this.options.envelope.open(sealed, `totp:${userId}`).toString('utf8')
  }

  /**
   * A recovery code as stored: `k:<key id>:<HMAC>` under the current data encryption key, so a
   * JWT_SECRET rotation leaves it working. Codes are compared without case, dashes or spaces.
   */
  private recoveryHash (userId: string, code: string): string {
    const [current] = this.recoveryKeys
    if (current === undefined) throw new Error('TOTP needs DATA_ENCRYPTION_KEYS')
    return `k:${current.id}:${current.hash.of(recoveryInput(userId, code))}`
  }

  /**
   * Every form a stored code of this text may have: under each data encryption key (a retired key
   * stays listed until its codes are replaced), and — for sets made before keys were used — the
   * bare HMAC under the JWT_SECRET key, which keeps verifying until used or replaced.
   */
  private recoveryCandidates (userId: string, code: string): string[] {
    const input = recoveryInput(userId, code)
    return [...this.recoveryKeys.map(({ id, hash }) => `k:${id}:${hash.of(input)}`), this.mac(input)]
  }

  private mac (input: string): string {
    return this.hash.of(input)
  }
}
