import type { OidcClient } from '../config/oidc-client-rules.js'
import type { AuthorizationCode } from '../db/oauth-codes.js'
import type { Session } from '../db/sessions.js'
import type { Store } from '../db/store.js'
import type { User } from '../db/users.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { SessionService } from '../sessions/session-service.js'
import { strengthOf, type AuthStrength, type Claims } from '../tokens/claims.js'
import type { TokenIssuer } from '../tokens/issuer.js'
import { OAuthError } from './oauth-error.js'
import type { OidcTokens } from './oidc-tokens.js'

/** The token endpoint's answer (RFC 6749 §5.1, OIDC Core §3.1.3.3). */
export interface ClientTokens {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
  id_token?: string
  refresh_token?: string
}

export interface ChildSettings { sessionMaxAge: number, refreshReuseInterval: number, accessTtl: number }

export interface ChildSessionOptions {
  store: Store
  tokens: TokenIssuer
  oidcTokens: OidcTokens
  sessions: SessionService
  settings: ChildSettings
  audit: AuditSink
}

/** A refresh token of a child session: §3's claims, the client's and the scopes granted. */
type ChildRefresh = Claims & { client_id: string, scope: string }

interface Issue { user: User, client: OidcClient, session: Pick<Session, 'id' | 'parentSessionId' | 'signedInAt'>, scopes: string[], strength: AuthStrength, nonce?: string | null, nowMs: number }

const iso = (ms: number): string => new Date(ms).toISOString()
const invalidGrant = (description: string): OAuthError => new OAuthError('invalid_grant', description)

/** Whether the user may use the client: anyone when it names no roles, a superuser always. */
export function mayUse (client: OidcClient, user: { roles: string[], isSuperuser: boolean }): boolean {
  return client.allowedRoles.length === 0 || user.isSuperuser || client.allowedRoles.some((r) => user.roles.includes(r))
}

/**
 * An authorization is a child session of the portal session (docs/oidc.md#tokens-and-claims): a
 * §3 session with client_id and parent_session_id, so every rule that ends sessions ends it, its
 * refresh tokens rotate as §3's do, and its access tokens are refused within a second once it ends.
 */
export class ChildSessions {
  constructor (private readonly options: ChildSessionOptions) {}

  /** A code redeemed: the child session, bounded by the portal session's sign-in + SESSION_MAX_AGE. */
  async start (code: AuthorizationCode, client: OidcClient, childSessionId: string, context: RequestContext): Promise<ClientTokens> {
    const { store } = this.options
    const [user, parent] = await Promise.all([store.users.findById(code.userId), store.sessions.findById(code.sessionId)])
    if (user === undefined || parent === undefined || parent.revokedAt !== null) throw invalidGrant('The sign-in this code came from has ended.')
    const nowMs = Date.now()
    const strength = strengthOf(JSON.parse(parent.refreshClaims) as Partial<Claims>, Math.floor(Date.parse(parent.signedInAt) / 1000))
    const session = { id: childSessionId, parentSessionId: parent.id, signedInAt: parent.signedInAt }
    const { answer, refresh, accessExp } = this.issue({ user, client, session, scopes: code.scopes, strength, nonce: code.nonce, nowMs })
    const stored = await store.sessions.create({
      id: childSessionId,
      userId: user.id,
      refreshJti: refresh?.jti ?? `none:${childSessionId}`,
      refreshClaims: JSON.stringify(refresh ?? {}),
      createdAt: iso(nowMs),
      signedInAt: parent.signedInAt,
      // without a refresh token the session lasts as long as its one access token
      expiresAt: iso((refresh?.exp ?? accessExp) * 1000),
      accessExpiresAt: iso(accessExp * 1000),
      ip: context.ip,
      userAgent: context.userAgent?.slice(0, 256) ?? null,
      clientId: client.clientId,
      parentSessionId: parent.id
    }, user.credentialsVersion)
    if (!stored) throw invalidGrant('The sign-in this code came from has ended.')
    return answer
  }

  /** §3's rotation, grace and reuse detection, for a child session's refresh token. */
  async refresh (token: string, client: OidcClient, context: RequestContext): Promise<ClientTokens> {
    const { store, tokens, sessions } = this.options
    const nowMs = Date.now()
    let claims: ChildRefresh
    try {
      claims = tokens.verifyClientRefresh(token, nowMs) as ChildRefresh
    } catch {
      throw invalidGrant('The refresh token is invalid or expired.')
    }
    if (claims.client_id !== client.clientId) throw invalidGrant('The refresh token was issued to another client.')
    const [session, user] = await Promise.all([store.sessions.findById(claims.session_id), store.users.findById(claims.user_id)])
    if (session === undefined || session.revokedAt !== null || user === undefined || session.clientId !== client.clientId) throw invalidGrant('The session has ended.')
    const end = async (reason: string, description: string): Promise<never> => {
      await sessions.revoke({ sessionId: session.id }, { reason }, context)
      throw invalidGrant(description)
    }
    if (client.disabled) return await end('client_disabled', 'The client is disabled.')
    if (!mayUse(client, user)) return await end('client_roles', 'The user may no longer use this client.')
    const scopes = claims.scope.split(' ')
    const strength = strengthOf(claims, claims.auth_time)
    if (session.refreshJti === claims.jti) {
      const { answer, refresh, accessExp } = this.issue({ user, client, session, scopes, strength, nowMs })
      if (refresh !== undefined && await store.sessions.rotate({
        sessionId: session.id,
        fromJti: claims.jti,
        toJti: refresh.jti,
        refreshClaims: JSON.stringify(refresh),
        now: iso(nowMs),
        expiresAt: iso(refresh.exp * 1000),
        accessExpiresAt: iso(accessExp * 1000),
        ip: context.ip,
        userAgent: context.userAgent?.slice(0, 256) ?? null
      })) return answer
    }
    const current = await store.sessions.findById(session.id)
    if (current === undefined || current.revokedAt !== null) throw invalidGrant('The session has ended.')
    const graceEnds = current.rotatedAt === null ? 0 : Date.parse(current.rotatedAt) + this.options.settings.refreshReuseInterval * 1000
    if (current.previousJti === claims.jti && nowMs <= graceEnds) return await this.reissue(current, { user, client, session, scopes, strength, nowMs })
    this.options.audit({ event: 'refresh_reuse_detected', outcome: 'failure', userId: user.id, sessionId: session.id, detail: client.clientId }, context)
    return await end('refresh_token_reused', 'The refresh token was already used.')
  }

  /** Two racing refreshes: the second gets the refresh token the first was given, and fresh other tokens. */
  private async reissue (current: Session, issue: Issue): Promise<ClientTokens> {
    const { answer, accessExp } = this.issue(issue)
    if (!await this.options.store.sessions.recordAccess(current.id, iso(accessExp * 1000))) throw invalidGrant('The session has ended.')
    return { ...answer, refresh_token: this.options.tokens.sign(JSON.parse(current.refreshClaims) as Claims) }
  }

  private issue ({ user, client, session, scopes, strength, nonce, nowMs }: Issue): { answer: ClientTokens, refresh?: ChildRefresh, accessExp: number } {
    const { tokens, oidcTokens, settings } = this.options
    const now = Math.floor(nowMs / 1000)
    const endsAt = Math.floor(Date.parse(session.signedInAt) / 1000) + settings.sessionMaxAge
    if (now >= endsAt) throw invalidGrant('The sign-in is older than SESSION_MAX_AGE.')
    const accessTtl = Math.max(1, Math.min(client.accessTokenTtl ?? settings.accessTtl, endsAt - now))
    const grant = { user, clientId: client.clientId, scopes, strength, portalSessionId: session.parentSessionId ?? session.id, childSessionId: session.id, accessTtl, nonce, nowSeconds: now }
    const access = oidcTokens.accessToken(grant)
    const answer: ClientTokens = { access_token: access.token, token_type: 'Bearer', expires_in: accessTtl, scope: scopes.join(' '), id_token: oidcTokens.idToken(grant, nonce !== undefined) }
    if (!scopes.includes('offline_access') || !client.grantTypes.includes('refresh_token')) return { answer, accessExp: access.claims.exp }
    const base = tokens.claims({ subject: user, sessionId: session.id, type: 'refresh', nowSeconds: now, strength })
    const refresh: ChildRefresh = { ...base, exp: Math.min(base.exp, endsAt), client_id: client.clientId, scope: scopes.join(' ') }
    return { answer: { ...answer, refresh_token: tokens.sign(refresh) }, refresh, accessExp: access.claims.exp }
  }

  /** The client's own token revoked (RFC 7009): the child session it belongs to ends. */
  async end (sessionId: string, clientId: string, reason: string, context: RequestContext): Promise<void> {
    const session = await this.options.store.sessions.findById(sessionId)
    if (session?.clientId !== clientId) return
    await this.options.sessions.revoke({ sessionId }, { reason }, context)
  }

  /** A client disabled or deleted, or a user's grant revoked: their child sessions end. */
  async endFor (target: { clientId: string, userId?: string }, reason: string, context: RequestContext): Promise<void> {
    await this.options.sessions.revoke(target, { reason }, context)
  }
}
