import { randomBytes, randomInt } from 'node:crypto'
import { KeyedHash } from '../crypto/keyed-hash.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { DataKey, Envelope } from '../crypto/envelope.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidOtp, InvalidPassword, NotFound, PasskeyInvalid, TokenRevoked, TotpAlreadyEnabled } from '../errors.js'
import { securityNoticeMail } from '../mail/templates.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { AuthThrottles } from '../limits/throttle.js'
import type { AccountBound } from '../limits/account-bound.js'
import { MFA_METHODS, type MfaMethod } from '../../schemas/two-factor.js'
import { secondFactorStrength, type Claims, type SignInMethod } from '../tokens/claims.js'
import { matchingStep, newTotpSecret, otpauthUri, qrSvg } from './totp.js'

export const CHALLENGE_TTL_SECONDS = 300
export const CHALLENGE_MAX_ATTEMPTS = 5
const RECOVERY_CODES = 10
// no 0/o, 1/l/i: ten of these carry 50 bits
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

/** `passkey`: verifies an assertion for the challenge's user (src/passkeys), spending its own challenge first. */
export interface FactorProof { code?: string | undefined, recoveryCode?: string | undefined, passkey?: ((userId: string) => Promise<boolean>) | undefined }

export interface Enrolment { secret: string, otpauthUri: string, qrSvg: string }

export interface SecondFactorChallenge { mfaToken: string, expiresIn: number, methods: readonly MfaMethod[] }

export interface TwoFactorOptions {
  store: Store
  /** src/accounts/password-check.ts (after this folder): counted by the change-password throttle, a right password rehashes a legacy hash */
  passwords: { counted: (user: User, password: string, context: RequestContext) => Promise<boolean> }
  sessions: SessionService
  envelope: Envelope
  dataKeys: DataKey[]
  throttles: AuthThrottles
  bound: AccountBound
  audit: AuditSink
  issuer: string
  notify: boolean
  /** ENABLE_PASSKEYS: a user's passkey is then offered as the second factor (`methods` gains `webauthn`) */
  passkeys?: boolean
  queued: () => void
  clock: () => number
}

const iso = (ms: number) => new Date(ms).toISOString()

function recoveryInput (userId: string, code: string): string {
  return `recovery\0${userId}\0${code.toLowerCase().replace(/[\s-]/g, '')}`
}

function newRecoveryCodes (): string[] {
  const one = () => Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('')
  return Array.from({ length: RECOVERY_CODES }, () => one().replace(/^(.{5})/, '$1-'))
}

/**
 * TOTP two-factor sign-in (docs/two-factor.md). Each time step is accepted once per user by one
 * conditional update, so concurrent requests with one code get one success.
 */
export class TwoFactorService {
  private readonly hash: KeyedHash
  private readonly recoveryKeys: Array<{ id: string, hash: KeyedHash }>

  constructor (private readonly options: TwoFactorOptions, jwtSecret: string) {
    this.hash = new KeyedHash(jwtSecret, 'gatehouse second factor')
    this.recoveryKeys = options.dataKeys.map(({ id, key }) => ({ id, hash: new KeyedHash(key, 'gatehouse recovery codes') }))
  }

  async isEnabled (userId: string): Promise<boolean> {
    return (await this.options.store.totp.find(userId))?.state === 'active'
  }

  async enroll (caller: Claims, password: string, context: RequestContext): Promise<Enrolment> {
    const user = await this.checkPassword(caller, password, context)
    if (await this.isEnabled(user.id)) throw new TotpAlreadyEnabled()
    const secret = newTotpSecret()
    const stored = await this.options.store.totp.putPending(user.id, this.seal(user.id, secret), iso(Date.now()))
    if (!stored) throw new TotpAlreadyEnabled()
    const uri = otpauthUri(secret, this.options.issuer, user.email)
    return { secret, otpauthUri: uri, qrSvg: await qrSvg(uri) }
  }

  /** The factor being enrolled (enroll done, activate not yet): what its QR code and the account page show again. */
  async pendingEnrolment (userId: string): Promise<Omit<Enrolment, 'qrSvg'> | undefined> {
    const { store } = this.options
    const factor = await store.totp.find(userId)
    const user = factor?.state === 'pending' ? await store.users.findById(userId) : undefined
    if (user === undefined || factor === undefined) return undefined
    const secret = this.open(userId, factor.sealedSecret)
    return { secret, otpauthUri: otpauthUri(secret, this.options.issuer, user.email) }
  }

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

  /** `{ idp }`: the first factor was a sign-in through that identity provider, which the session will name (its `idp` claim). */
  async challenge (user: User, method: SignInMethod | { idp: string }, remember: boolean, context: RequestContext): Promise<SecondFactorChallenge> {
    const token = randomBytes(32).toString('base64url')
    const now = Date.now()
    await this.options.store.totp.createChallenge({
      tokenHash: this.mac(`challenge\0${token}`),
      userId: user.id,
      remember,
      // the provider's id after `ext`: the challenge's row is the one place that outlives the request
      amr: typeof method === 'string' ? [method] : ['ext', method.idp],
      createdAt: iso(now),
      expiresAt: iso(now + CHALLENGE_TTL_SECONDS * 1000)
    })
    this.options.audit({ event: 'mfa_challenge_issued', userId: user.id, detail: typeof method === 'string' ? method : 'ext' }, context)
    // after a passkey sign-in, the passkey is not offered again as the second factor
    const webauthn = this.options.passkeys === true && method !== 'pop' && await this.options.store.passkeys.countOf(user.id) > 0
    return { mfaToken: token, expiresIn: CHALLENGE_TTL_SECONDS, methods: MFA_METHODS.filter((m) => m !== 'webauthn' || webauthn) }
  }

  /** The user a live sign-in challenge belongs to, neither counted nor spent (the passkey options of the second factor). */
  async challengedUser (mfaToken: string): Promise<string | undefined> { return await this.options.store.totp.liveChallengeUser(this.mac(`challenge\0${mfaToken}`), CHALLENGE_MAX_ATTEMPTS, iso(Date.now())) }

  /** The attempt is reserved before the code is checked; wrong codes count as failed sign-ins. */
  async completeChallenge (mfaToken: string, proof: FactorProof, context: RequestContext): Promise<{ pair: TokenPair, remember: boolean }> {
    const { store } = this.options
    const reserved = await store.totp.reserveChallenge(this.mac(`challenge\0${mfaToken}`), CHALLENGE_MAX_ATTEMPTS, iso(Date.now()))
    const user = reserved === undefined ? undefined : await store.users.findById(reserved.userId)
    if (reserved === undefined || user === undefined) return this.failed(undefined, 'unknown, spent or expired challenge', context, proof)
    const first = reserved.amr[0] === 'email' || reserved.amr[0] === 'pop' || reserved.amr[0] === 'ext' ? reserved.amr[0] : 'pwd'
    // a passkey sign-in that still needs a second factor cannot be finished by a passkey
    if (proof.passkey !== undefined && first === 'pop') return this.failed(user.id, 'passkey after a passkey sign-in', context, proof)
    if (!await this.provesCounted(user, proof, context)) {
      if (reserved.attempts >= CHALLENGE_MAX_ATTEMPTS) await store.totp.spendChallenge(reserved.id, iso(Date.now()))
      return this.failed(user.id, 'wrong code', context, proof)
    }
    if (!await store.totp.spendChallenge(reserved.id, iso(Date.now()))) return this.failed(user.id, 'challenge spent', context, proof)
    // after a provider's sign-in (`ext`), the session names the provider (src/idp/)
    const pair = await this.options.sessions.startWith(user, { ...secondFactorStrength([first], Math.floor(Date.now() / 1000), proof.passkey === undefined ? 'otp' : 'pop'), ...(first === 'ext' && { idp: reserved.amr[1] }) }, context)
    this.options.audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: first === 'ext' ? `idp:${reserved.amr[1]}` : proof.passkey === undefined ? 'second factor' : 'passkey' }, context)
    return { pair, remember: reserved.remember }
  }

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

  async disable (caller: Claims, password: string, proof: FactorProof, context: RequestContext): Promise<void> {
    const user = await this.checkPassword(caller, password, context)
    if (!await this.provesCounted(user, proof, context)) return this.failed(user.id, 'wrong code', context)
    await this.remove(user, user.id, context)
  }

  async disableFor (actorId: string, userId: string, context: RequestContext): Promise<void> {
    const user = await this.options.store.users.findById(userId)
    if (user === undefined) throw new NotFound('User not found')
    await this.remove(user, actorId, context)
  }

  async proves (userId: string, proof: FactorProof): Promise<boolean> {
    const { store } = this.options
    const factor = await store.totp.find(userId)
    if (factor?.state !== 'active') return false
    if (proof.passkey !== undefined) return await proof.passkey(userId)
    const nowMs = this.options.clock()
    if (proof.code !== undefined) {
      const step = matchingStep(this.open(userId, factor.sealedSecret), proof.code, nowMs)
      return step !== undefined && await store.totp.acceptStep({ userId, state: 'active', step, now: iso(nowMs) })
    }
    if (proof.recoveryCode === undefined) return false
    return await store.totp.useRecoveryCode(userId, this.recoveryCandidates(userId, proof.recoveryCode), iso(nowMs))
  }

  private async provesCounted (user: User, proof: FactorProof, context: RequestContext): Promise<boolean> {
    const { ok } = await this.options.throttles.login.attempt(`login:${user.email}`, context.ip, async () => ({ ok: await this.provesBounded(user, proof) }))
    return ok
  }

  /**
   * Past the bound a six-digit code is refused unchecked (429), so guessing gains nothing; a
   * recovery code (50 random bits) or a passkey is still checked: the real user's way past the lock.
   */
  private async provesBounded (user: User, proof: FactorProof, check = async () => await this.proves(user.id, proof)): Promise<boolean> {
    const { bound } = this.options
    const slot = await bound.reserve(user.id)
    if (!slot.allowed && proof.recoveryCode === undefined && proof.passkey === undefined) bound.refuse(slot)
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
   * A recovery code is only looked up here and spent in the reset's own transaction, once its
   * token is claimed: the loser of two racing resets keeps its code.
   */
  async checkResetCode (user: User, code: string | undefined): Promise<FactorProof | undefined> {
    if (code === undefined) return undefined
    const proof: FactorProof = /^[0-9]{6}$/.test(code) ? { code } : { recoveryCode: code }
    const check = proof.code !== undefined
      ? async () => await this.proves(user.id, proof)
      : async () => await this.options.store.totp.hasRecoveryCode(user.id, this.recoveryCandidates(user.id, code))
    return await this.provesBounded(user, proof, check) ? proof : undefined
  }

  async spendRecoveryCode (tx: Store, userId: string, code: string): Promise<boolean> {
    return await tx.totp.useRecoveryCode(userId, this.recoveryCandidates(userId, code), iso(this.options.clock()))
  }

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
    const { store, passwords } = this.options
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    if (!await passwords.counted(user, password, context)) {
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

  /** A passkey's failure is the one answer of every passkey verification, 400 passkey_invalid. */
  private failed (userId: string | undefined, detail: string, context: RequestContext, proof?: FactorProof): never {
    const passkey = proof?.passkey !== undefined
    this.options.audit({ event: passkey ? 'login_failed' : 'totp_failed', outcome: 'failure', userId, detail: passkey ? `passkey: ${detail}` : detail }, context)
    throw passkey ? new PasskeyInvalid() : new InvalidOtp()
  }

  private seal (userId: string, secret: string): string {
    return this.options.envelope.seal(secret, `totp:${userId}`)
  }

  private open (userId: string, sealed: string): string {
    return this.options.envelope.open(sealed, `totp:${userId}`).toString('utf8')
  }

  /** Keyed by the current data encryption key, so a JWT_SECRET rotation leaves codes working. */
  private recoveryHash (userId: string, code: string): string {
    const [current] = this.recoveryKeys
    if (current === undefined) throw new Error('TOTP needs DATA_ENCRYPTION_KEYS')
    return `k:${current.id}:${current.hash.of(recoveryInput(userId, code))}`
  }

  /** Sets made before data keys were used stay as a bare HMAC under the JWT_SECRET key. */
  private recoveryCandidates (userId: string, code: string): string[] {
    const input = recoveryInput(userId, code)
    return [...this.recoveryKeys.map(({ id, hash }) => `k:${id}:${hash.of(input)}`), this.mac(input)]
  }

  private mac (input: string): string {
    return this.hash.of(input)
  }
}
