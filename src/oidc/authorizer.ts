import type { OidcClient } from '../config/oidc-client-rules.js'
import type { Store } from '../db/store.js'
import type { Interaction, InteractionPhase } from '../db/oauth-interactions.js'
import type { RequestContext } from '../events.js'
import type { Claims } from '../tokens/claims.js'
import { AuthorizePageError, AuthorizeRedirectError, responseUrl, type AuthorizationRequest } from './authorize-request.js'
import { mayUse } from './child-sessions.js'
import type { AuthorizationCodes } from './codes.js'
import type { FlowSecrets } from './flow-secrets.js'
import type { OidcGrants } from './grants.js'

/** An interaction (a sign-in or a consent pending) lasts ten minutes and is used once. */
export const INTERACTION_TTL_MS = 10 * 60_000

export interface AuthorizerOptions {
  store: Store
  secrets: FlowSecrets
  codes: AuthorizationCodes
  grants: OidcGrants
  clients: { find (clientId: string): Promise<OidcClient | undefined> }
  issuer: string
}

/** Where the browser goes next: a 302/303 to one of these. */
export type Next = { kind: 'login', url: string } | { kind: 'consent', url: string } | { kind: 'client', url: string }

/** A pending consent, as the consent page shows it. */
export interface PendingConsent { client: OidcClient, request: AuthorizationRequest }

/**
 * §15.1 steps 3 to 5: which sign-in the request needs, whether the user may use the client,
 * whether consent is needed, and the code. The pending steps are interactions whose id only the
 * browser holds (the database keeps its keyed hash).
 */
export class Authorizer {
  constructor (private readonly options: AuthorizerOptions) {}

  private error (request: AuthorizationRequest, error: string, description: string): AuthorizeRedirectError {
    return new AuthorizeRedirectError(error, description, request.redirectUri, request.state)
  }

  /** The answer on the client's redirect_uri: an error, with state and iss. */
  errorUrl (err: AuthorizeRedirectError): string {
    return responseUrl(err.redirectUri, { error: err.oauthError, error_description: err.description, state: err.state, iss: this.options.issuer })
  }

  /** A new request (steps 1 and 2 passed) with the browser's portal session, if any. */
  async begin (client: OidcClient, request: AuthorizationRequest, session: Claims | undefined, context: RequestContext): Promise<Next> {
    const nowSeconds = Math.floor(Date.now() / 1000)
    const stale = request.maxAge !== undefined && session !== undefined && nowSeconds - session.auth_time > request.maxAge
    const weak = client.requireAal2 && session?.aal !== 'aal2'
    if (session === undefined || request.prompt.includes('login') || stale || weak) {
      if (request.prompt.includes('none')) throw this.error(request, 'login_required', 'The user must sign in.')
      return { kind: 'login', url: await this.interaction(request, 'login', undefined) }
    }
    return await this.proceed(client, request, session, context)
  }

  /** Back from the sign-in page: the sign-in must be newer than the interaction, and strong enough. */
  async resume (id: string, session: Claims | undefined, context: RequestContext): Promise<Next> {
    const { interaction, client, request } = await this.open(id, 'login')
    if (session === undefined || session.auth_time < Math.floor(Date.parse(interaction.createdAt) / 1000)) {
      return { kind: 'login', url: this.loginUrl(id, request) }
    }
    await this.spend(interaction)
    if (client.requireAal2 && session.aal !== 'aal2') throw this.error(request, 'access_denied', 'This application needs a sign-in with a second factor.')
    return await this.proceed(client, request, session, context)
  }

  /** The consent page's request: only for the portal session it was asked in. */
  async pendingConsent (id: string, session: Claims): Promise<PendingConsent> {
    const { interaction, client, request } = await this.open(id, 'consent')
    if (interaction.sessionId !== session.session_id) throw new AuthorizePageError('invalid_request', 'This consent request belongs to another sign-in.')
    return { client, request }
  }

  /** Allow or Deny: the code, or access_denied; recorded as a grant when allowed. */
  async decide (id: string, session: Claims, allow: boolean, context: RequestContext): Promise<string> {
    const { interaction, client, request } = await this.open(id, 'consent')
    if (interaction.sessionId !== session.session_id) throw new AuthorizePageError('invalid_request', 'This consent request belongs to another sign-in.')
    await this.spend(interaction)
    if (!allow) return this.errorUrl(this.error(request, 'access_denied', 'The user denied the request.'))
    await this.options.grants.record(session.user_id, client.clientId, request.scopes, context)
    return await this.codeUrl(request, session, context)
  }

  private async proceed (client: OidcClient, request: AuthorizationRequest, session: Claims, context: RequestContext): Promise<Next> {
    if (!mayUse(client, { roles: session.roles, isSuperuser: session.is_superuser })) throw this.error(request, 'access_denied', 'Your account may not use this application.')
    const consented = client.skipConsent ||
      (!request.prompt.includes('consent') && await this.options.grants.covering(session.user_id, client.clientId, request.scopes))
    if (!consented) {
      if (request.prompt.includes('none')) throw this.error(request, 'consent_required', 'The user must consent.')
      return { kind: 'consent', url: await this.interaction(request, 'consent', session.session_id) }
    }
    return { kind: 'client', url: await this.codeUrl(request, session, context) }
  }

  private async codeUrl (request: AuthorizationRequest, session: Claims, context: RequestContext): Promise<string> {
    const code = await this.options.codes.issue(request, session, context)
    return responseUrl(request.redirectUri, { code, state: request.state, iss: this.options.issuer })
  }

  private loginUrl (id: string, request: AuthorizationRequest): string {
    const rd = `/oauth2/authorize?interaction=${id}`
    const hint = request.loginHint === undefined ? '' : `&login_hint=${encodeURIComponent(request.loginHint)}`
    return `${this.options.issuer}/portal/login?rd=${encodeURIComponent(rd)}&prompt=login${hint}`
  }

  private async interaction (request: AuthorizationRequest, phase: InteractionPhase, sessionId: string | undefined): Promise<string> {
    const { secrets, store, issuer } = this.options
    const id = secrets.generate()
    const { hash, keyId } = secrets.hash('interaction', id)
    const nowMs = Date.now()
    await store.oauthInteractions.create({
      idHash: hash,
      keyId,
      clientId: request.clientId,
      request: JSON.stringify(request),
      phase,
      sessionId: sessionId ?? null,
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + INTERACTION_TTL_MS).toISOString()
    })
    return phase === 'login' ? this.loginUrl(id, request) : `${issuer}/portal/consent?interaction=${id}`
  }

  private async open (id: string, phase: InteractionPhase): Promise<{ interaction: Interaction, client: OidcClient, request: AuthorizationRequest }> {
    const interaction = await this.options.store.oauthInteractions.findLive(this.options.secrets.candidates('interaction', id), new Date().toISOString())
    if (interaction === undefined || interaction.phase !== phase) throw new AuthorizePageError('invalid_request', 'This sign-in request is unknown, expired or already used. Start again from the application.')
    const client = await this.options.clients.find(interaction.clientId)
    if (client === undefined || client.disabled) throw new AuthorizePageError('invalid_client', 'The application is unknown or disabled.')
    return { interaction, client, request: JSON.parse(interaction.request) as AuthorizationRequest }
  }

  private async spend (interaction: Interaction): Promise<void> {
    if (!await this.options.store.oauthInteractions.spend(interaction.idHash, new Date().toISOString())) {
      throw new AuthorizePageError('invalid_request', 'This sign-in request was already used. Start again from the application.')
    }
  }
}
