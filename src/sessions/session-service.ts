import { randomUUID } from 'node:crypto'
import { CLI_CONTEXT, type AuditSink, type RequestContext } from '../events.js'
import type { RevocationTarget, Session } from '../db/sessions.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidCredentials, NotFound, RefreshTokenReused, TokenExpired, TokenRevoked } from '../errors.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'
import { type TokenIssuer } from '../tokens/issuer.js'
import { secondFactorStrength, signInStrength, strengthOf, type AuthStrength, type Claims, type SignInMethod } from '../tokens/claims.js'

export interface TokenPair {
  sessionId: string
  accessToken: string
  refreshToken: string
  accessExpiresAt: number
  /** seconds from the access token's `iat` to its `exp`: its whole lifetime */
  accessLifetime: number
  refreshExpiresAt: number
  user: User
}

export type LogoutScope = 'local' | 'others' | 'global'

/** Why sessions end (the revocation's reason) and who ended them (the signed-in caller, if any), for the audit trail. */
export interface RevocationCause { reason: string, actorId?: string | undefined }

export interface SessionSettings {
  refreshReuseInterval: number
  /** SESSION_MAX_AGE, seconds: no token of a session expires later than its sign-in plus this */
  sessionMaxAge: number
  /** SESSIONS_MAX_PER_USER: a sign-in beyond it ends the user's oldest sessions; unset, no bound */
  sessionsMaxPerUser?: number
}

/**
 * A revocation is kept until the latest access token issued for its session has expired (its
 * `exp`, recorded on the session, whatever ACCESS_TOKEN_TTL is now), plus this: exp is whole
 * seconds, so no access token of the session outlives the entry.
 */
const REVOCATION_MARGIN_MS = 1000

const iso = (ms: number) => new Date(ms).toISOString()

/** A User-Agent is kept to this many characters: enough to tell browsers apart, bounded in every row. */
export const USER_AGENT_MAX = 256

/** The client a session records: its address (none from the command line) and a bounded User-Agent. */
function clientOf (context: RequestContext | undefined): { ip: string | null, userAgent: string | null } {
  const ip = context === undefined || context.ip === CLI_CONTEXT.ip ? null : context.ip
  const userAgent = context?.userAgent
  return { ip, userAgent: userAgent === undefined || userAgent === '' ? null : userAgent.slice(0, USER_AGENT_MAX) }
}

/** A session as its owner (or an admin) may see it: never a token. */
export interface SessionView {
  id: string
  createdAt: string
  lastUsedAt: string
  expiresAt: string
  ip: string | null
  userAgent: string | null
  aal: string
  amr: string[]
}

/** The strength of the sign-in, from the session's refresh claims; sessions from before those claims were password sign-ins. */
function viewOf (session: Session): SessionView {
  const claims = JSON.parse(session.refreshClaims) as { aal?: unknown, amr?: unknown }
  return {
    id: session.id,
    createdAt: session.createdAt,
    lastUsedAt: session.lastUsedAt,
    expiresAt: session.expiresAt,
    ip: session.ip,
    userAgent: session.userAgent,
    aal: typeof claims.aal === 'string' ? claims.aal : 'aal1',
    amr: Array.isArray(claims.amr) ? claims.amr.filter((m): m is string => typeof m === 'string') : ['pwd']
  }
}

export interface SessionServiceOptions {
  store: Store
  tokens: TokenIssuer
  /** the revoked sessions every guarded request is checked against */
  index: RevocationIndex
  settings: SessionSettings
  audit: AuditSink
}

/** The claims a refresh token is made of: whose, which session, when, until when at most (sign-in + SESSION_MAX_AGE), and how strong. */
interface RefreshGrant { user: User, sessionId: string, now: number, endsAt: number, strength: AuthStrength }

/** A rotation: the session as read, to whom, when (ms), at which strength, from which client. */
interface Rotation { session: Session, user: User, nowMs: number, strength: AuthStrength, client: { ip: string | null, userAgent: string | null } }

/** Sessions: starting one, rotating its refresh token, and revoking it (docs/api.md#tokens-and-sessions). */
export class SessionService {
  constructor (private readonly options: SessionServiceOptions) {}

  private get store (): Store {
    return this.options.store
  }

  /**
   * Starts a session for a user as read (and checked) by the caller. Should the password or a
   * grant have changed since that read, no session is stored and the sign-in is refused as
   * with wrong credentials: its check no longer holds, and the change's revocation is over.
   * `method` is how the user proved who they are (the tokens' `amr`); `secondFactor` says a TOTP
   * code or a recovery code followed it (aal2).
   */
  async start (user: User, context?: RequestContext, method: SignInMethod = 'pwd', secondFactor = false): Promise<TokenPair> {
    const nowMs = Date.now()
    const now = Math.floor(nowMs / 1000)
    const sessionId = randomUUID()
    const strength = secondFactor ? secondFactorStrength([method], now) : signInStrength(method, now)
    const refresh = this.refreshFor({ user, sessionId, now, endsAt: now + this.options.settings.sessionMaxAge, strength })
    const access = this.accessFor(refresh, now)
    const stored = await this.store.sessions.create({
      id: sessionId,
      userId: user.id,
      refreshJti: refresh.jti,
      refreshClaims: JSON.stringify(refresh),
      // to the millisecond, so the listing's newest-first order holds for sign-ins within a second
      createdAt: iso(nowMs),
      signedInAt: iso(now * 1000),
      expiresAt: iso(refresh.exp * 1000),
      accessExpiresAt: iso(access.exp * 1000),
      ...clientOf(context)
    }, user.credentialsVersion)
    if (!stored) throw new InvalidCredentials()
    const max = this.options.settings.sessionsMaxPerUser
    if (max !== undefined) await this.revoke({ userId: user.id, keepNewest: max }, { reason: 'session_limit' }, context ?? { ip: 'unknown' })
    return this.pair(user, refresh, access)
  }

  /**
   * Rotates the refresh token. The token spent by the previous rotation, presented again within
   * the grace interval (two tabs racing), gets the successor that rotation issued, re-signed from
   * its stored claims, so both callers end on one chain; any other spent token is theft.
   */
  async refresh (token: string, context: RequestContext): Promise<TokenPair> {
    const nowMs = Date.now()
    const claims = this.options.tokens.verify(token, 'refresh', nowMs)
    const [session, user] = await Promise.all([
      this.store.sessions.findById(claims.session_id),
      this.store.users.findById(claims.user_id)
    ])
    if (session === undefined || session.revokedAt !== null || user === undefined) throw new TokenRevoked()
    const now = Math.floor(nowMs / 1000)
    // the session's absolute end: refused from then on, even with a token older than the limit
    const endsAt = Math.floor(Date.parse(session.signedInAt) / 1000) + this.options.settings.sessionMaxAge
    if (now >= endsAt) throw new TokenExpired()
    if (session.refreshJti === claims.jti) {
      // the sign-in's strength and time travel down the chain unchanged
      const pair = await this.rotate({ session, user, nowMs, strength: strengthOf(claims, Math.floor(Date.parse(session.signedInAt) / 1000)), client: clientOf(context) })
      if (pair !== undefined) {
        this.options.audit({ event: 'refreshed', actorId: user.id, userId: user.id, sessionId: session.id }, context)
        return pair
      }
    }
    const current = await this.store.sessions.findById(claims.session_id)
    if (current === undefined || current.revokedAt !== null) throw new TokenRevoked()
    if (this.inGrace(current, claims, nowMs)) return await this.reissue(user, current, now)
    await this.revoke({ sessionId: session.id }, { reason: 'refresh_token_reused' }, context)
    this.options.audit({ event: 'refresh_reuse_detected', outcome: 'failure', userId: user.id, sessionId: session.id }, context)
    throw new RefreshTokenReused()
  }

  /**
   * New tokens for the caller's live session at a higher strength (a second factor proven within
   * it): its refresh token rotates, so the one held before is spent as by a refresh.
   */
  async elevate (claims: Claims, user: User, strength: AuthStrength): Promise<TokenPair> {
    const session = await this.store.sessions.findById(claims.session_id)
    if (session === undefined || session.revokedAt !== null) throw new TokenRevoked()
    // proven within the session, from where it was last used
    const pair = await this.rotate({ session, user, nowMs: Date.now(), strength, client: { ip: session.ip, userAgent: session.userAgent } })
    if (pair === undefined) throw new TokenRevoked()
    return pair
  }

  /**
   * The session's refresh token rotated to a new pair at `strength`, ending where the session
   * ends; undefined when its current token is no longer the one read (a concurrent rotation).
   */
  private async rotate ({ session, user, nowMs, strength, client }: Rotation): Promise<TokenPair | undefined> {
    const now = Math.floor(nowMs / 1000)
    const endsAt = Math.floor(Date.parse(session.signedInAt) / 1000) + this.options.settings.sessionMaxAge
    const next = this.refreshFor({ user, sessionId: session.id, now, endsAt, strength })
    const access = this.accessFor(next, now)
    const rotated = await this.store.sessions.rotate({
      sessionId: session.id,
      fromJti: session.refreshJti,
      toJti: next.jti,
      refreshClaims: JSON.stringify(next),
      now: iso(nowMs),
      expiresAt: iso(next.exp * 1000),
      accessExpiresAt: iso(access.exp * 1000),
      ...client
    })
    return rotated ? this.pair(user, next, access) : undefined
  }

  /**
   * Only a live session's credential ends sessions. A dead one — its session is over, or it is
   * a refresh token spent before the grace interval — ends nothing: with the default scope that
   * is a sign-out already done (204); ending the others or all with it is token_revoked, so a
   * token left in an old backup or a thief's hands cannot sign the user out everywhere.
   */
  async logout (claims: Claims, scope: LogoutScope, context: RequestContext): Promise<void> {
    if (!await this.isLive(claims)) {
      if (scope === 'local') return
      throw new TokenRevoked()
    }
    const target: RevocationTarget = scope === 'local'
      ? { sessionId: claims.session_id }
      : { userId: claims.user_id, exceptSessionId: scope === 'others' ? claims.session_id : undefined }
    await this.revoke(target, { reason: `logout_${scope}`, actorId: claims.user_id }, context)
    this.options.audit({ event: 'logged_out', actorId: claims.user_id, userId: claims.user_id, sessionId: claims.session_id, detail: scope }, context)
  }

  /**
   * Ends the target's sessions at once: refresh refused by the store, access by the index, each
   * entry for as long as an access token of that session can live (REVOCATION_MARGIN_MS).
   * Given a transaction's store, the index learns of them before the commit; should that
   * transaction roll back, tokens are refused that need not be, which is the safe way to err.
   */
  async revoke (target: RevocationTarget, { reason, actorId }: RevocationCause, context: RequestContext, store: Store = this.store): Promise<number> {
    const revoked = await store.sessions.revoke(target, reason, iso(Date.now()), REVOCATION_MARGIN_MS)
    for (const { sessionId, revocationExpiresAt } of revoked) this.options.index.add(sessionId, Date.parse(revocationExpiresAt))
    const first = revoked[0]
    if (first !== undefined && !('sessionId' in target)) {
      this.options.audit({ event: 'sessions_revoked', actorId, userId: target.userId, detail: `${reason}: ${revoked.length}` }, context)
    } else if (first !== undefined && target.userId !== undefined) {
      this.options.audit({ event: 'session_revoked', actorId, userId: first.userId, sessionId: first.sessionId, detail: reason }, context)
    }
    return revoked.length
  }

  /** A user's live sessions, newest first, as they may be shown (docs/api.md#sessions). */
  async list (userId: string): Promise<SessionView[]> {
    return (await this.store.sessions.listLive(userId, iso(Date.now()))).map(viewOf)
  }

  /**
   * Ends one session of the user's. Another user's session, one already over and an unknown id
   * are all not_found, alike, so session ids of others cannot be probed.
   */
  async revokeOwn (userId: string, sessionId: string, cause: RevocationCause, context: RequestContext): Promise<void> {
    if (await this.revoke({ sessionId, userId }, cause, context) === 0) throw new NotFound('Session not found')
  }

  /** A refresh token must be the session's current one, or the one just spent within the grace interval. */
  private async isLive (claims: Claims): Promise<boolean> {
    const session = await this.store.sessions.findById(claims.session_id)
    if (session === undefined || session.revokedAt !== null) return false
    return claims.type === 'access' || session.refreshJti === claims.jti || this.inGrace(session, claims, Date.now())
  }

  /** The refresh token spent by the session's last rotation, presented again within the grace interval. */
  private inGrace (session: Session, claims: Claims, nowMs: number): boolean {
    if (session.previousJti !== claims.jti || session.rotatedAt === null) return false
    return nowMs <= Date.parse(session.rotatedAt) + this.options.settings.refreshReuseInterval * 1000
  }

  /** True for a token that verified here before (the verified-token cache): see readAccessCredential. */
  readonly isKnownToken = (token: string): boolean => this.options.tokens.cache.has(token)

  /** The hot path of every guarded request: signature, type, exp, then an in-memory lookup. */
  verifyAccess (token: string): Claims {
    const claims = this.options.tokens.verify(token, 'access', Date.now())
    if (this.options.index.has(claims.session_id)) throw new TokenRevoked()
    return claims
  }

  /** Verifies a refresh token without spending it (logout identifies the session with it). */
  verifyRefresh (token: string): Claims {
    return this.options.tokens.verify(token, 'refresh', Date.now())
  }

  /**
   * The grace answer: the successor the last rotation issued, re-signed from its stored claims,
   * with a fresh access token recorded on the session first (refused if it was revoked meanwhile).
   */
  private async reissue (user: User, session: Session, now: number): Promise<TokenPair> {
    const refresh = JSON.parse(session.refreshClaims) as Claims
    const access = this.accessFor(refresh, now)
    if (!await this.store.sessions.recordAccess(session.id, iso(access.exp * 1000))) throw new TokenRevoked()
    return this.pair(user, refresh, access)
  }

  /** A refresh token that expires with the session at the latest (`endsAt`: sign-in + SESSION_MAX_AGE). */
  private refreshFor ({ user, sessionId, now, endsAt, strength }: RefreshGrant): Claims {
    const claims = this.options.tokens.claims({ subject: user, sessionId, type: 'refresh', nowSeconds: now, strength })
    return claims.exp > endsAt ? { ...claims, exp: endsAt } : claims
  }

  /** The access token that goes with a refresh token: the same subject and grants, and never outliving it. */
  private accessFor (refresh: Claims, now: number): Claims {
    const subject = { id: refresh.user_id, email: refresh.email, roles: refresh.roles, isSuperuser: refresh.is_superuser }
    const claims = this.options.tokens.claims({ subject, sessionId: refresh.session_id, type: 'access', nowSeconds: now, strength: strengthOf(refresh, refresh.iat) })
    return claims.exp > refresh.exp ? { ...claims, exp: refresh.exp } : claims
  }

  private pair (user: User, refresh: Claims, access: Claims): TokenPair {
    return {
      sessionId: refresh.session_id,
      accessToken: this.options.tokens.sign(access),
      refreshToken: this.options.tokens.sign(refresh),
      accessExpiresAt: access.exp * 1000,
      accessLifetime: access.exp - access.iat,
      refreshExpiresAt: refresh.exp * 1000,
      user
    }
  }
}
