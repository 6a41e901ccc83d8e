import { NotFound } from '../errors.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { Store } from '../db/store.js'
import type { OidcClient } from '../config/oidc-client-rules.js'

export interface GrantView { client_id: string, client_name: string, scopes: string[], granted_at: string }

/** Ends the user's child sessions of a client (oidc-flow registers it); runs after the grant is gone. */
export type GrantRevokedListener = (userId: string, clientId: string, context: RequestContext) => void | Promise<void>

export interface OidcGrantsOptions {
  store: Store
  clients: { find (clientId: string): Promise<OidcClient | undefined> }
  audit: AuditSink
  clock?: () => number
}

/**
 * The consents users gave clients (SPEC §15.1 step 4): one record per user and client holding
 * every scope consented to, so a later request for fewer or the same scopes needs no new consent.
 */
export class OidcGrants {
  private readonly listeners: GrantRevokedListener[] = []
  private readonly clock: () => number

  constructor (private readonly options: OidcGrantsOptions) {
    this.clock = options.clock ?? Date.now
  }

  /** Whether a stored grant of the user covers every scope asked for. */
  async covering (userId: string, clientId: string, scopes: string[]): Promise<boolean> {
    const grant = await this.options.store.oauthGrants.find(userId, clientId)
    return grant !== undefined && scopes.every((scope) => grant.scopes.includes(scope))
  }

  /** The user allowed the client these scopes: added to what they allowed before. Audit oidc_consent_granted. */
  async record (userId: string, clientId: string, scopes: string[], context: RequestContext): Promise<void> {
    const { store, audit } = this.options
    const before = await store.oauthGrants.find(userId, clientId)
    const all = [...new Set([...(before?.scopes ?? []), ...scopes])]
    await store.oauthGrants.put(userId, { clientId, scopes: all, grantedAt: new Date(this.clock()).toISOString() })
    audit({ event: 'oidc_consent_granted', userId, actorId: userId, detail: `${clientId}: ${scopes.join(' ')}` }, context)
  }

  /** The apps the user authorized; a client since removed is left out (its grants go with it). */
  async list (userId: string): Promise<GrantView[]> {
    const grants = await this.options.store.oauthGrants.listFor(userId)
    const views: GrantView[] = []
    for (const grant of grants) {
      const client = await this.options.clients.find(grant.clientId)
      if (client !== undefined) views.push({ client_id: grant.clientId, client_name: client.name, scopes: grant.scopes, granted_at: grant.grantedAt })
    }
    return views
  }

  /**
   * Ends the user's consent to the client and, through the listeners, the user's child sessions
   * of it: also for a client that needs no consent (`skip_consent`), whose sessions still end.
   * 404 when the client is unknown and the user holds no grant of it.
   */
  async revoke (userId: string, clientId: string, context: RequestContext): Promise<void> {
    const removed = await this.options.store.oauthGrants.remove(userId, clientId)
    if (!removed && await this.options.clients.find(clientId) === undefined) throw new NotFound('Grant not found')
    for (const listener of this.listeners) await listener(userId, clientId, context)
    this.options.audit({ event: 'oidc_grant_revoked', userId, actorId: userId, detail: clientId }, context)
  }

  /** oidc-flow ends the user's child sessions of the client here. */
  onRevoke (listener: GrantRevokedListener): void {
    this.listeners.push(listener)
  }
}
