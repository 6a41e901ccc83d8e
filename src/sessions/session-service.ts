import { randomUUID } from 'node:crypto'
import { CLI_CONTEXT, type AuditSink, type RequestContext } from '../events.js'
import type { ApiKeyTarget } from '../db/api-keys.js'
import type { RevocationTarget, Session } from '../db/sessions.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import { InvalidCredentials, NotFound, RefreshTokenReused, TokenExpired, TokenRevoked } from '../errors.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'
import { type TokenIssuer } from '../tokens/issuer.js'
import { secondFactorStrength, signInStrength, strengthOf, type AuthStrength, type Claims, type SecondFactor, type SignInMethod } from '../tokens/claims.js'

export interface TokenPair {
  sessionId: string
  accessToken: string
  refreshToken: string
  accessExpiresAt: number
  accessLifetime: number
  refreshExpiresAt: number
  user: User
}

export type LogoutScope = 'local' | 'others' | 'global'

export interface RevocationCause { reason: string, actorId?: string | undefined }

export interface SessionSettings {
  refreshReuseInterval: number
  sessionMaxAge: number
  /** SESSIONS_MAX_PER_USER: a sign-in beyond it ends the user's oldest sessions; unset, no bound */
  sessionsMaxPerUser?: number
}

// exp is whole seconds: the margin keeps every access token of the session inside the entry
const REVOCATION_MARGIN_MS = 1000

const iso = (ms: number) => new Date(ms).toISOString()

export const USER_AGENT_MAX = 256

function clientOf (context: RequestContext | undefined): { ip: string | null, userAgent: string | null } {
  const ip = context === undefined || context.ip === CLI_CONTEXT.ip ? null : context.ip
  const userAgent = context?.userAgent
  return { ip, userAgent: userAgent === undefined || userAgent === '' ? null : userAgent.slice(0, USER_AGENT_MAX) }
}

export interface SessionView {
  id: string
  createdAt: string
  lastUsedAt: string
  expiresAt: string
  ip: string | null
  userAgent: string | null
  aal: string
  amr: string[]
  /** an OpenID Connect client's child session: the client */
  clientId: string | null
}

// sessions from before aal/amr were in the refresh claims were password sign-ins
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
    amr: Array.isArray(claims.amr) ? claims.amr.filter((m): m is string => typeof m === 'string') : ['pwd'],
    clientId: session.clientId
  }
}

export interface SessionServiceOptions {
  store: Store
  tokens: TokenIssuer
  index: RevocationIndex
  settings: SessionSettings
  audit: AuditSink
}

interface RefreshGrant { user: User, sessionId: string, now: number, endsAt: number, strength: AuthStrength }

interface Rotation { session: Session, user: User, nowMs: number, strength: AuthStrength, client: { ip: string | null, userAgent: string | null } }

/** Sessions: starting one, rotating its refresh token, and revoking it (docs/api.md#tokens-and-sessions). */
export class SessionService {
  constructor (private readonly options: SessionServiceOptions) {}

  private get store (): Store {
    return this.options.store
  }

  /**
   * Should the password or a grant have changed since the caller's read, no session is stored
   * and the sign-in fails as with wrong credentials: the change's revocation is already over.
   */
  async start (user: User, context?: RequestContext, method: SignInMethod = 'pwd', secondFactor: boolean | SecondFactor = false): Promise<TokenPair> {
    const now = Math.floor(Date.now() / 1000)
    return await this.startWith(user, secondFactor === false ? signInStrength(method, now) : secondFactorStrength([method], now, secondFactor === true ? 'otp' : secondFactor), context)
  }

  /** A session of the strength given (a sign-in through an identity provider says which, and how strong). */
  async startWith (user: User, strength: AuthStrength, context?: RequestContext): Promise<TokenPair> {
    // a service account never signs in, whichever path got here (docs/api-keys.md#service-accounts)
    if (user.kind === 'service') throw new InvalidCredentials()
    const nowMs = Date.now()
    const now = Math.floor(nowMs / 1000)
    const sessionId = randomUUID()
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
   * A spent token presented again within the grace interval (two tabs racing) gets the successor
   * already issued, so both callers end on one chain; any other spent token is theft.
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

  /** A second factor proven within the session: the refresh token rotates, spending the old one. */
  async elevate (claims: Claims, user: User, strength: AuthStrength): Promise<TokenPair> {
    const session = await this.store.sessions.findById(claims.session_id)
    if (session === undefined || session.revokedAt !== null) throw new TokenRevoked()
    const pair = await this.rotate({ session, user, nowMs: Date.now(), strength, client: { ip: session.ip, userAgent: session.userAgent } })
    if (pair === undefined) throw new TokenRevoked()
    return pair
  }

  /** Undefined when a concurrent rotation already replaced the token read. */
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
   * A dead credential ends nothing: with scope local that is a sign-out already done; otherwise
   * token_revoked, so a token from an old backup or a thief cannot sign the user out everywhere.
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
   * The index learns of revocations before a transaction commits; a rollback then refuses tokens
   * that need not be, which is the safe way to err.
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

  /**
   * API keys end as sessions do: in the same revocation index and broadcast, the key id as the
   * session id (docs/api-keys.md#how-a-key-ends). Password changes and logouts never come here.
   */
  async revokeKeys (target: ApiKeyTarget, { reason, actorId }: RevocationCause, context: RequestContext, store: Store = this.store): Promise<number> {
    const revoked = await store.apiKeys.revoke(target, reason, iso(Date.now()), REVOCATION_MARGIN_MS)
    for (const { keyId, userId, revocationExpiresAt } of revoked) {
      this.options.index.add(keyId, Date.parse(revocationExpiresAt))
      this.options.audit({ event: 'api_key_revoked', actorId, userId, detail: `${reason}: key ${keyId}` }, context)
    }
    return revoked.length
  }

  async list (userId: string): Promise<SessionView[]> {
    return (await this.store.sessions.listLive(userId, iso(Date.now()))).map(viewOf)
  }

  /** Another user's session, an ended one and an unknown id are all not_found, so ids cannot be probed. */
  async revokeOwn (userId: string, sessionId: string, cause: RevocationCause, context: RequestContext): Promise<void> {
    if (await this.revoke({ sessionId, userId }, cause, context) === 0) throw new NotFound('Session not found')
  }

  private async isLive (claims: Claims): Promise<boolean> {
    const session = await this.store.sessions.findById(claims.session_id)
    if (session === undefined || session.revokedAt !== null) return false
    return claims.type === 'access' || session.refreshJti === claims.jti || this.inGrace(session, claims, Date.now())
  }

  private inGrace (session: Session, claims: Claims, nowMs: number): boolean {
    if (session.previousJti !== claims.jti || session.rotatedAt === null) return false
    return nowMs <= Date.parse(session.rotatedAt) + this.options.settings.refreshReuseInterval * 1000
  }

  readonly isKnownToken = (token: string): boolean => this.options.tokens.cache.has(token)

  /** The hot path of every guarded request: signature, type, exp, then an in-memory lookup. */
  verifyAccess (token: string): Claims {
    const claims = this.options.tokens.verify(token, 'access', Date.now())
    if (this.options.index.has(claims.session_id)) throw new TokenRevoked()
    return claims
  }

  verifyRefresh (token: string): Claims {
    return this.options.tokens.verify(token, 'refresh', Date.now())
  }

  private async reissue (user: User, session: Session, now: number): Promise<TokenPair> {
    const refresh = JSON.parse(session.refreshClaims) as Claims
    const access = this.accessFor(refresh, now)
    if (!await this.store.sessions.recordAccess(session.id, iso(access.exp * 1000))) throw new TokenRevoked()
    return this.pair(user, refresh, access)
  }

  private refreshFor ({ user, sessionId, now, endsAt, strength }: RefreshGrant): Claims {
    const claims = this.options.tokens.claims({ subject: user, sessionId, type: 'refresh', nowSeconds: now, strength })
    return claims.exp > endsAt ? { ...claims, exp: endsAt } : claims
  }

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
