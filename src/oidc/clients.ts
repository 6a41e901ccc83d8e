import type { ClientFields, OidcClient } from '../config/oidc-client-rules.js'
import type { FileClientEntry } from '../config/oidc.js'
import type { Store } from '../db/store.js'
import type { StoredClient } from '../db/oauth-clients.js'
import { ConfigError } from '../errors.js'
import type { RequestContext } from '../events.js'
import { authenticateClient, type ClientRequest, type ClientThrottle } from './client-auth.js'
import type { ClientSecrets, SecretHash } from './client-secrets.js'

export type { OidcClient } from '../config/oidc-client-rules.js'

export type ClientChange = 'disabled' | 'deleted'
export type ClientChangeListener = (clientId: string, change: ClientChange) => void | Promise<void>

/** A client with its times (null for the file's): what the API and the CLI show. */
export interface ClientView extends OidcClient { createdAt: string | null, updatedAt: string | null }

export interface OidcClientsOptions {
  store: Store
  fileClients: FileClientEntry[]
  secrets: ClientSecrets
  throttle: ClientThrottle
  /** how long a client read from the database is kept in memory (ms): a change made elsewhere is seen within it */
  cacheMs?: number
}

interface Cached { client: OidcClient | undefined, until: number }

const CACHE_LIMIT = 10_000

function clientOf (fields: ClientFields, readOnly: boolean): OidcClient {
  const { clientId, name, type, tokenEndpointAuthMethod, redirectUris, postLogoutRedirectUris, webOrigins, scopes, allowedRoles, requireAal2, skipConsent, grantTypes, roles, accessTokenTtl, disabled } = fields
  return { clientId, name, type, tokenEndpointAuthMethod, redirectUris, postLogoutRedirectUris, webOrigins, scopes, allowedRoles, requireAal2, skipConsent, grantTypes, roles, accessTokenTtl, disabled, readOnly }
}

export function viewOf (stored: StoredClient): ClientView {
  return { ...clientOf(stored, false), createdAt: stored.createdAt, updatedAt: stored.updatedAt }
}

/**
 * The registry of OpenID Connect clients: those of OIDC_CLIENTS_FILE (fixed, in memory, their
 * secrets hashed at start) and those of the database, read through a short memory cache so the
 * hot paths never wait on it; a change made here is seen at once, one made by another instance or
 * the CLI within `cacheMs` (500 ms). Secrets are always read fresh: a rotation stops the old one at once.
 */
export class OidcClients {
  private readonly file: Map<string, { client: OidcClient, secret: SecretHash | undefined }>
  private readonly cache = new Map<string, Cached>()
  private readonly listeners: ClientChangeListener[] = []
  private readonly cacheMs: number

  constructor (private readonly options: OidcClientsOptions) {
    this.file = new Map(options.fileClients.map((entry) => [entry.clientId, {
      client: clientOf(entry, true),
      secret: entry.secret === undefined ? undefined : options.secrets.hash(entry.secret)
    }]))
    this.cacheMs = options.cacheMs ?? 500
  }

  /** A client_id both in OIDC_CLIENTS_FILE and in the database stops the start. */
  async start (): Promise<void> {
    const clash = (await this.options.store.oauthClients.list()).find((stored) => this.file.has(stored.clientId))
    if (clash !== undefined) {
      throw new ConfigError(`Invalid configuration: OIDC_CLIENTS_FILE names client_id ${clash.clientId}, which the database also holds: remove one of them (\`gatehouse oidc-client delete ${clash.clientId}\` with the file unset removes the database's)`)
    }
  }

  isFileClient (clientId: string): boolean {
    return this.file.has(clientId)
  }

  /** Enabled or not; undefined when unknown. */
  async find (clientId: string): Promise<OidcClient | undefined> {
    const fixed = this.file.get(clientId)
    if (fixed !== undefined) return fixed.client
    const now = Date.now()
    const cached = this.cache.get(clientId)
    if (cached !== undefined && cached.until > now) return cached.client
    const stored = await this.options.store.oauthClients.find(clientId)
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
    const client = stored && clientOf(stored, false)
    this.cache.set(clientId, { client, until: now + this.cacheMs })
    return client
  }

  /** The file's clients, then the database's, oldest first. */
  async list (): Promise<ClientView[]> {
    const fixed = [...this.file.values()].map(({ client }) => ({ ...client, createdAt: null, updatedAt: null }))
    return [...fixed, ...(await this.options.store.oauthClients.list()).map(viewOf)]
  }

  /** The secret's keyed hash, read now (never cached). */
  async secretOf (clientId: string): Promise<SecretHash | undefined> {
    const fixed = this.file.get(clientId)
    if (fixed !== undefined) return fixed.secret
    const stored = await this.options.store.oauthClients.find(clientId)
    return stored?.secretHash == null || stored.secretKeyId === null ? undefined : { hash: stored.secretHash, keyId: stored.secretKeyId }
  }

  /**
   * RFC 6749 §2.3: client_secret_basic, client_secret_post or none (public clients), as the client
   * is registered; throws OAuthError('invalid_client') (basic: true when Basic was used), or
   * RateLimited once the address's failures reach LOGIN_RATE_LIMIT.
   */
  async authenticate (request: ClientRequest, context: RequestContext): Promise<OidcClient> {
    return await authenticateClient(request, context, { clients: this, secrets: this.options.secrets, throttle: this.options.throttle })
  }

  /** oidc-flow ends the client's child sessions here; the grants are already gone when it is called. */
  onChange (listener: ClientChangeListener): void {
    this.listeners.push(listener)
  }

  /** Called by ClientAdmin after a change is stored. */
  async changed (clientId: string, change?: ClientChange): Promise<void> {
    this.cache.delete(clientId)
    if (change === undefined) return
    for (const listener of this.listeners) await listener(clientId, change)
  }
}
