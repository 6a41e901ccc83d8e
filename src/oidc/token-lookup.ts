import type { OidcClient } from '../config/oidc-client-rules.js'
import type { Store } from '../db/store.js'
import type { RequestContext } from '../events.js'
import type { SessionService } from '../sessions/session-service.js'
import type { TokenIssuer } from '../tokens/issuer.js'
import type { ChildSessions } from './child-sessions.js'
import type { OidcTokens } from './oidc-tokens.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'

/** RFC 7662 §2.2's answer. */
export interface Introspection {
  active: boolean
  scope?: string
  client_id?: string
  sub?: string
  exp?: number
  iat?: number
  iss?: string
  aud?: string
  token_type?: string
}

export interface LookupOptions {
  flow: { tokens: OidcTokens, children: ChildSessions, revocations: RevocationIndex }
  tokens: TokenIssuer
  sessions: SessionService
  store: Store
  clients: { find (clientId: string): Promise<OidcClient | undefined> }
}

interface Known { kind: 'access' | 'refresh', clientId: string | undefined, sessionId: string | undefined, claims: Record<string, unknown> }

const INACTIVE: Introspection = { active: false }

/**
 * Revocation (RFC 7009) and introspection (RFC 7662) of the tokens gatehouse issues: a client's
 * access and refresh tokens, and §3's. A token of an ended session, of a disabled or deleted
 * client, or one that is expired or not ours is inactive.
 */
export class TokenLookup {
  constructor (private readonly options: LookupOptions) {}

  /** undefined when it is none of ours, or no longer valid */
  private identify (token: string): Known | undefined {
    const { flow, tokens, sessions } = this.options
    const nowMs = Date.now()
    const attempts: Array<() => Known> = [
      () => {
        const c = flow.tokens.verifyAccess(token, nowMs)
        return { kind: 'access', clientId: c.client_id, sessionId: c.session_id, claims: c as unknown as Record<string, unknown> }
      },
      () => {
        const c = tokens.verifyClientRefresh(token, nowMs)
        return { kind: 'refresh', clientId: c.client_id, sessionId: c.session_id, claims: c as unknown as Record<string, unknown> }
      },
      () => {
        const c = sessions.verifyAccess(token)
        return { kind: 'access', clientId: undefined, sessionId: c.session_id, claims: c as unknown as Record<string, unknown> }
      },
      () => {
        const c = tokens.verify(token, 'refresh', nowMs)
        return { kind: 'refresh', clientId: undefined, sessionId: c.session_id, claims: c as unknown as Record<string, unknown> }
      }
    ]
    for (const attempt of attempts) {
      try {
        return attempt()
      } catch { /* not this kind */ }
    }
    return undefined
  }

  private async live (known: Known): Promise<boolean> {
    if (known.sessionId !== undefined && this.options.flow.revocations.has(known.sessionId)) return false
    if (known.clientId !== undefined) {
      const client = await this.options.clients.find(known.clientId)
      if (client === undefined || client.disabled) return false
    }
    if (known.kind === 'access' || known.sessionId === undefined) return true
    const session = await this.options.store.sessions.findById(known.sessionId)
    return session !== undefined && session.revokedAt === null && session.refreshJti === known.claims.jti
  }

  async introspect (token: string): Promise<Introspection> {
    const known = this.identify(token)
    if (known === undefined || !await this.live(known)) return INACTIVE
    const c = known.claims
    const text = (name: string): string | undefined => (typeof c[name] === 'string' ? c[name] : undefined)
    const number = (name: string): number | undefined => (typeof c[name] === 'number' ? c[name] : undefined)
    const scope = text('scope')
    const aud = text('aud')
    return {
      active: true,
      ...(scope !== undefined && { scope }),
      ...(known.clientId !== undefined && { client_id: known.clientId }),
      sub: text('sub'),
      exp: number('exp'),
      iat: number('iat'),
      iss: text('iss'),
      ...(aud !== undefined && { aud }),
      token_type: known.kind === 'access' ? 'Bearer' : 'refresh_token'
    }
  }

  /** Only the client's own token ends anything: another's, an unknown one and §3's are left untouched. */
  async revoke (token: string, client: OidcClient, context: RequestContext): Promise<void> {
    const known = this.identify(token)
    if (known?.clientId !== client.clientId || known.sessionId === undefined) return
    await this.options.flow.children.end(known.sessionId, client.clientId, 'oidc_token_revoked', context)
  }
}
