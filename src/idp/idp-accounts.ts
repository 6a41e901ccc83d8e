import { randomUUID } from 'node:crypto'
import { OPERATOR, type UserService } from '../accounts/users.js'
import type { IdpProvider } from '../config/idp.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { EmailTaken, IdentityInUse, TokenRevoked } from '../errors.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { PendingLink } from '../portal/flow.js'
import type { SessionService, TokenPair } from '../sessions/session-service.js'
import { externalStrength } from '../tokens/claims.js'
import type { SecondFactorChallenge, TwoFactorService } from '../two-factor/two-factor-service.js'
import { mappedRoles, nameOf, upstreamMfa, type UpstreamIdentity } from './identity.js'

export interface IdpAccountsOptions {
  store: Store
  users: UserService
  sessions: SessionService
  twoFactor: TwoFactorService | undefined
  audit: AuditSink
  defaultRoles: string[]
}

/** A sign-in through a provider: a session, or (a TOTP user the provider does not vouch for) the second step. */
export type SignedIn =
  | { status: 'signed_in', pair: TokenPair }
  | { status: 'second_factor_required', challenge: SecondFactorChallenge }

const iso = (ms: number) => new Date(ms).toISOString()
const sameRoles = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((role) => b.includes(role))

/** What the decision table's rows write: links, new accounts, roles, sessions, and their audit events. */
export class IdpAccounts {
  constructor (private readonly options: IdpAccountsOptions) {}

  /**
   * The roles the mapping governs are set first (a removal ends the user's sessions and keys, as any
   * grant taken away does: src/accounts/users.ts), so the session, or the one the second step
   * starts, carries them. A TOTP user is asked for the code as after a password, unless the
   * provider is trusted to have asked for a second factor and says it did.
   */
  async signIn (provider: IdpProvider, identity: UpstreamIdentity, found: User, context: RequestContext): Promise<SignedIn> {
    const { users, sessions, twoFactor, audit } = this.options
    const roles = mappedRoles(provider, identity, found.roles)
    const user = sameRoles(roles, found.roles) ? found : await users.update(found.id, { roles }, OPERATOR, context)
    const mfa = upstreamMfa(provider, identity)
    if (!mfa && twoFactor !== undefined && await twoFactor.isEnabled(user.id)) {
      return { status: 'second_factor_required', challenge: await twoFactor.challenge(user, { idp: provider.id }, false, context) }
    }
    const pair = await sessions.startWith(user, externalStrength(provider.id, mfa, Math.floor(Date.now() / 1000)), context)
    audit({ event: 'login_succeeded', actorId: user.id, userId: user.id, sessionId: pair.sessionId, detail: `idp:${provider.id}` }, context)
    return { status: 'signed_in', pair }
  }

  /** The linked user, its identity's email and last sign-in brought up to date (the upstream email may have changed). */
  async linkedUser (identityId: string, userId: string, email: string | undefined): Promise<User> {
    const { store } = this.options
    await store.identities.recordLogin(identityId, email ?? null, iso(Date.now()))
    const user = await store.users.findById(userId)
    if (user === undefined) throw new TokenRevoked()
    return user
  }

  /** A new account for a verified email no one has: that email (verified), no password, DEFAULT_ROLES under the mapping, linked. */
  async signUp (provider: IdpProvider, identity: UpstreamIdentity & { email: string }, context: RequestContext): Promise<TokenPair> {
    const { store, sessions, audit, defaultRoles } = this.options
    const id = randomUUID()
    const now = iso(Date.now())
    await store.transaction(async (tx) => {
      const created = await tx.users.insertMany([{
        id, email: identity.email, name: nameOf(identity), age: null, passwordHash: '', roles: mappedRoles(provider, identity, defaultRoles), isSuperuser: false, emailVerified: true, createdAt: now
      }], now)
      // a registration of the same address a moment before: nothing is written, the browser starts again
      if (created.length === 0) throw new EmailTaken()
      if (!await tx.identities.insert({ id: randomUUID(), userId: id, provider: provider.id, subject: identity.subject, email: identity.email, createdAt: now, lastLoginAt: now })) throw new IdentityInUse()
    })
    const user = await store.users.findById(id)
    if (user === undefined) throw new TokenRevoked()
    const pair = await sessions.startWith(user, externalStrength(provider.id, upstreamMfa(provider, identity), Math.floor(Date.now() / 1000)), context)
    audit({ event: 'registered', actorId: id, userId: id, sessionId: pair.sessionId, email: identity.email, detail: `idp:${provider.id}` }, context)
    return pair
  }

  /**
   * Links (provider, subject) to the user. False when it is linked already; to another user, that
   * is identity_in_use (two links at once: the unique index lets one win).
   */
  async link (userId: string, link: Omit<PendingLink, 'userId' | 'expiresAt'>, event: 'idp_linked' | 'idp_auto_linked', context: RequestContext): Promise<void> {
    const { store, audit } = this.options
    const now = iso(Date.now())
    const inserted = await store.identities.insert({
      id: randomUUID(), userId, provider: link.provider, subject: link.subject, email: link.email, createdAt: now, lastLoginAt: event === 'idp_auto_linked' ? now : null
    })
    if (!inserted) {
      if ((await store.identities.findBySubject(link.provider, link.subject))?.userId === userId) return
      throw new IdentityInUse()
    }
    audit({ event, actorId: userId, userId, email: link.email, detail: `idp:${link.provider}` }, context)
  }

  /**
   * A pending link (docs/identity-providers.md), after a sign-in in the browser that holds it: linked
   * only to the user whose email matched, within its ten minutes; anything else is dropped quietly
   * (another account signed in, or the identity was linked meanwhile).
   */
  async completePending (link: PendingLink, userId: string, context: RequestContext): Promise<boolean> {
    if (link.userId !== userId || link.expiresAt * 1000 <= Date.now()) return false
    try {
      await this.link(userId, link, 'idp_linked', context)
      return true
    } catch (err) {
      if (err instanceof IdentityInUse) return false
      throw err
    }
  }
}
