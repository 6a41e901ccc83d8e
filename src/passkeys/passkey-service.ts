import { randomBytes } from 'node:crypto'
import { generateAuthenticationOptions, generateRegistrationOptions } from '@simplewebauthn/server'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { AuthenticationCredential, RegistrationCredential, type CeremonyOptions, type Passkey } from '../../schemas/passkeys.js'
import type { AuditEvent, AuditSink, RequestContext } from '../events.js'
import type { Credentials } from '../accounts/credentials.js'
import type { DataKey } from '../crypto/envelope.js'
import type { StoredPasskey } from '../db/passkeys.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import type { CeremonyPurpose } from '../db/webauthn-challenges.js'
import { PasskeyInvalid, TokenRevoked, TooManyPasskeys } from '../errors.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import type { Claims } from '../tokens/claims.js'
import type { SecondFactorChallenge, TwoFactorService } from '../two-factor/two-factor-service.js'
import { CHALLENGE_TTL_SECONDS, Challenges } from './challenges.js'
import { PasskeyList } from './passkey-list.js'
import { ALGORITHMS, NotVerified, verifyAssertion, verifyRegistration, type RelyingParty } from './verification.js'

export type { CeremonyOptions } from '../../schemas/passkeys.js'
export type PasskeyView = Passkey

export interface PasskeySettings extends RelyingParty {
  rpName: string
  satisfiesMfa: boolean
  maxPerUser: number
}

export interface PasskeyServiceOptions {
  store: Store
  sessions: SessionService
  twoFactor: TwoFactorService | undefined
  audit: AuditSink
  /** the last-credential rule, which a removal asks */
  credentials: Credentials
  settings: PasskeySettings
  dataKeys: DataKey[]
  /** whether mail is configured: adding or removing a passkey then queues a notice */
  notify: boolean
  queued: () => void
  /** wall clock, ms */
  clock: () => number
}

/** As src/accounts/sign-in.ts's SignInOutcome, with the `remember` the sign-in asked for. */
export type PasskeySignIn =
  | { status: 'signed_in', pair: TokenPair, remember: boolean }
  | { status: 'second_factor_required', challenge: SecondFactorChallenge }

export interface RegistrationInput { challengeId: string, credential: unknown, name?: string | undefined }
export interface LoginInput { challengeId: string, credential: unknown, remember: boolean }
export interface SecondFactorInput { mfaToken: string, challengeId: string, credential: unknown }

const registrationShape = TypeCompiler.Compile(RegistrationCredential)
const assertionShape = TypeCompiler.Compile(AuthenticationCredential)
const TIMEOUT_MS = CHALLENGE_TTL_SECONDS * 1000

interface Asserted { user: User, userVerified: boolean }

/**
 * Passkeys (SPEC §14, docs/passkeys.md): the ceremonies over @simplewebauthn/server, with the rules
 * of §14.1 it leaves to the caller. Every refusal is one answer, 400 passkey_invalid; the reason goes
 * to the audit trail only.
 */
export class PasskeyService extends PasskeyList {
  private readonly challenges: Challenges

  constructor (private readonly options: PasskeyServiceOptions) {
    super(options)
    this.challenges = new Challenges(options.store, options.dataKeys, options.clock)
  }

  /** Creation options for the caller (the route has checked recent authentication). */
  async registrationOptions (caller: Claims): Promise<CeremonyOptions> {
    const { store, settings } = this.options
    const user = await store.users.findById(caller.user_id)
    if (user === undefined) throw new TokenRevoked()
    const existing = await store.passkeys.listOf(user.id)
    if (existing.length >= settings.maxPerUser) throw new TooManyPasskeys()
    const handle = await store.passkeys.ensureHandle(user.id, randomBytes(32).toString('base64url'))
    const { challengeId, challenge } = await this.challenges.issue('registration', user.id)
    const options = await generateRegistrationOptions({
      rpName: settings.rpName,
      rpID: settings.rpId,
      userName: user.email,
      userID: Buffer.from(handle, 'base64url'),
      userDisplayName: user.name,
      challenge,
      timeout: TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: settings.userVerification },
      supportedAlgorithmIDs: ALGORITHMS
    })
    return { challenge_id: challengeId, options: { ...options } }
  }

  async register (caller: Claims, input: RegistrationInput, context: RequestContext): Promise<PasskeyView> {
    const { store, settings } = this.options
    const credential = await this.refusing({ event: 'passkey_registered', userId: caller.user_id }, context, async () => {
      // the challenge is spent before anything of the response is looked at
      const spent = await this.challenges.spend(input.challengeId, 'registration')
      if (spent?.userId !== caller.user_id) throw new NotVerified('unknown, spent, expired or another user\'s challenge')
      if (!registrationShape.Check(input.credential)) throw new NotVerified('not a registration response')
      const verified = await verifyRegistration(settings, input.credential, spent)
      if (await store.passkeys.find(verified.id) !== undefined) throw new NotVerified('credential already registered')
      return verified
    })
    const now = new Date(this.options.clock()).toISOString()
    const passkey: StoredPasskey = { ...credential, userId: caller.user_id, name: input.name ?? 'Passkey', createdAt: now, lastUsedAt: null }
    await store.transaction(async (tx) => {
      await tx.passkeys.lockUser(caller.user_id)
      const user = await tx.users.findById(caller.user_id)
      if (user === undefined) throw new TokenRevoked()
      if (await tx.passkeys.countOf(user.id) >= settings.maxPerUser) throw new TooManyPasskeys()
      if (!await tx.passkeys.insert(passkey)) throw new PasskeyInvalid()
      await this.notice(tx, user, `A passkey ("${passkey.name}") was added to your account.`)
    })
    this.mailQueued()
    this.options.audit({ event: 'passkey_registered', actorId: caller.user_id, userId: caller.user_id, sessionId: caller.session_id, detail: passkey.id }, context)
    return this.view(passkey)
  }

  /** Discoverable (empty allowCredentials) unless `mfaToken`: then the second factor of that sign-in, listing its user's passkeys. */
  async loginOptions (mfaToken?: string): Promise<CeremonyOptions> {
    const { store, settings, twoFactor } = this.options
    let userId: string | null = null
    let allowCredentials: Array<{ id: string, transports: string[] }> = []
    if (mfaToken !== undefined) {
      userId = await twoFactor?.challengedUser(mfaToken) ?? null
      if (userId === null) throw new PasskeyInvalid()
      allowCredentials = (await store.passkeys.listOf(userId)).map((p) => ({ id: p.id, transports: p.transports }))
    }
    const { challengeId, challenge } = await this.challenges.issue(userId === null ? 'login' : 'second_factor', userId)
    const options = await generateAuthenticationOptions({ rpID: settings.rpId, allowCredentials, challenge, timeout: TIMEOUT_MS, userVerification: settings.userVerification })
    return { challenge_id: challengeId, options: { ...options } }
  }

  /** A user-verified assertion with PASSKEY_SATISFIES_MFA is aal2; otherwise aal1, and a TOTP user gets the challenge. */
  async login (input: LoginInput, context: RequestContext): Promise<PasskeySignIn> {
    const { sessions, settings, twoFactor, audit } = this.options
    const { user, userVerified } = await this.refusing({ event: 'login_failed' }, context, async () => await this.asserted('login', input, undefined))
    const strong = userVerified && settings.satisfiesMfa
    if (!strong && twoFactor !== undefined && await twoFactor.isEnabled(user.id)) {
      return { status: 'second_factor_required', challenge: await twoFactor.challenge(user, 'pop', input.remember, context) }
    }
    const pair = await sessions.start(user, context, 'pop', strong ? 'pop' : false)
    audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: 'passkey' }, context)
    return { status: 'signed_in', pair, remember: input.remember }
  }

  /** The passkey as the second factor of a sign-in challenge (`POST /auth/verify-2fa`), spent as a code would be. */
  async secondFactor (input: SecondFactorInput, context: RequestContext): Promise<{ pair: TokenPair, remember: boolean }> {
    const { twoFactor } = this.options
    if (twoFactor === undefined) throw new PasskeyInvalid()
    const passkey = async (userId: string): Promise<boolean> => {
      try {
        await this.refusing({ event: 'login_failed', userId }, context, async () => await this.asserted('second_factor', input, userId))
        return true
      } catch (err) {
        if (err instanceof PasskeyInvalid) return false
        throw err
      }
    }
    return await twoFactor.completeChallenge(input.mfaToken, { passkey }, context)
  }

  /** The challenge is spent before anything of the response is looked at. */
  private async asserted (purpose: CeremonyPurpose, input: { challengeId: string, credential: unknown }, userId: string | undefined): Promise<Asserted> {
    const { store, settings } = this.options
    const spent = await this.challenges.spend(input.challengeId, purpose)
    if (spent === undefined || (userId !== undefined && spent.userId !== userId)) throw new NotVerified('unknown, spent, expired or other-purpose challenge')
    if (!assertionShape.Check(input.credential)) throw new NotVerified('not an authentication response')
    const credential = input.credential
    const found = await store.passkeys.findWithHandle(credential.id)
    if (found === undefined) throw new NotVerified('unknown credential')
    const { passkey: stored, handle } = found
    if (spent.userId !== null && stored.userId !== spent.userId) throw new NotVerified('another user\'s credential', false, stored.userId)
    const given = credential.response.userHandle
    // a discoverable sign-in names the user by the handle alone: it must be there, and be the credential's user's
    if (given === undefined ? purpose === 'login' : given !== handle) throw new NotVerified('user handle is not the credential\'s user\'s', false, stored.userId)
    const assertion = await verifyAssertion(settings, credential, spent, stored).catch((err: unknown) => {
      if (err instanceof NotVerified) err.userId = stored.userId
      throw err
    })
    const now = new Date(this.options.clock()).toISOString()
    const recorded = await store.passkeys.recordUse({ id: stored.id, fromCount: stored.signCount, toCount: assertion.signCount, backedUp: assertion.backedUp, now })
    if (!recorded) throw new NotVerified('a concurrent use of the credential', false, stored.userId)
    const user = await store.users.findById(stored.userId)
    if (user === undefined) throw new NotVerified('the user is gone')
    return { user, userVerified: assertion.userVerified }
  }

  /** Every refusal is 400 passkey_invalid; a sign-count regression is also `passkey_clone_suspected`. */
  private async refusing<T> (as: { event: AuditEvent, userId?: string }, context: RequestContext, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      if (!(err instanceof NotVerified)) throw err
      const userId = err.userId ?? as.userId
      if (err.cloneSuspected) this.options.audit({ event: 'passkey_clone_suspected', outcome: 'failure', userId, detail: err.message }, context)
      this.options.audit({ event: as.event, outcome: 'failure', userId, detail: `passkey: ${err.message}` }, context)
      throw new PasskeyInvalid()
    }
  }
}
