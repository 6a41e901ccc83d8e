import { randomBytes } from 'node:crypto'
import type { CreateClientRequest, UpdateClientRequest } from '../../schemas/oidc-clients.js'
import { changedFields, clientFields, clientRuleFailures, type ClientFields } from '../config/oidc-client-rules.js'
import type { StoredClient } from '../db/oauth-clients.js'
import type { Store } from '../db/store.js'
import { ClientReadOnly, NotFound, ValidationFailed } from '../errors.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { ClientSecrets } from './client-secrets.js'
import { viewOf, type ClientView, type OidcClients } from './clients.js'

export interface ClientAdminOptions {
  store: Store
  clients: OidcClients
  secrets: ClientSecrets
  audit: AuditSink
  clock?: () => number
}

/** Who changes a client: the request's context and the superuser (none from the CLI). */
export interface Changer { context: RequestContext, actorId?: string | undefined }

/** A new client, with its secret (confidential clients) shown this once. */
export interface CreatedClient { client: ClientView, secret: string | undefined }

function assertRules (client: ClientFields): void {
  const failures = clientRuleFailures(client)
  if (Object.keys(failures).length > 0) throw new ValidationFailed(failures)
}

/**
 * Creating, changing, deleting clients and rotating their secrets (the API and the CLI). The
 * clients of OIDC_CLIENTS_FILE are refused (409 client_read_only). Deleting or disabling a client
 * removes its grants and tells the registry's listeners, which end its child sessions.
 */
export class ClientAdmin {
  private readonly clock: () => number

  constructor (private readonly options: ClientAdminOptions) {
    this.clock = options.clock ?? Date.now
  }

  async create (input: CreateClientRequest, changer: Changer): Promise<CreatedClient> {
    const { store, clients, secrets } = this.options
    const clientId = input.client_id ?? randomBytes(12).toString('hex')
    if (clients.isFileClient(clientId)) throw new ClientReadOnly()
    const fields = clientFields({ ...input, client_id: clientId })
    assertRules(fields)
    const secret = fields.type === 'confidential' ? secrets.generate() : undefined
    const hashed = secret === undefined ? undefined : secrets.hash(secret)
    const now = new Date(this.clock()).toISOString()
    const stored: StoredClient = { ...fields, secretHash: hashed?.hash ?? null, secretKeyId: hashed?.keyId ?? null, createdAt: now, updatedAt: now }
    if (!await store.oauthClients.insert(stored)) throw new ValidationFailed({ client_id: ['The client_id has already been taken'] })
    await clients.changed(clientId)
    this.audit('oidc_client_created', clientId, changer)
    return { client: viewOf(stored), secret }
  }

  async get (clientId: string): Promise<ClientView> {
    const found = (await this.options.clients.list()).find((client) => client.clientId === clientId)
    if (found === undefined) throw new NotFound('Client not found')
    return found
  }

  async update (clientId: string, change: UpdateClientRequest, changer: Changer): Promise<ClientView> {
    const { store, clients } = this.options
    const before = await this.stored(clientId)
    const after = changedFields(before, change)
    assertRules(after)
    const now = new Date(this.clock()).toISOString()
    if (!await store.oauthClients.update(after, now)) throw new NotFound('Client not found')
    const disabling = after.disabled && !before.disabled
    if (disabling) await store.oauthGrants.removeForClient(clientId)
    await clients.changed(clientId, disabling ? 'disabled' : undefined)
    this.audit('oidc_client_updated', clientId, changer, disabling ? 'disabled' : undefined)
    return viewOf({ ...before, ...after, updatedAt: now })
  }

  async remove (clientId: string, changer: Changer): Promise<void> {
    const { store, clients } = this.options
    await this.stored(clientId)
    await store.transaction(async (tx) => {
      await tx.oauthGrants.removeForClient(clientId)
      if (!await tx.oauthClients.remove(clientId)) throw new NotFound('Client not found')
    })
    await clients.changed(clientId, 'deleted')
    this.audit('oidc_client_deleted', clientId, changer)
  }

  /** A new secret; the old one is refused from now on (secrets are never cached). */
  async rotateSecret (clientId: string, changer: Changer): Promise<string> {
    const { store, secrets } = this.options
    const client = await this.stored(clientId)
    if (client.type === 'public') throw new ValidationFailed({ client_id: ['A public client has no secret'] })
    const secret = secrets.generate()
    if (!await store.oauthClients.setSecret(clientId, secrets.hash(secret), new Date(this.clock()).toISOString())) throw new NotFound('Client not found')
    await this.options.clients.changed(clientId)
    this.audit('oidc_client_secret_rotated', clientId, changer)
    return secret
  }

  private async stored (clientId: string): Promise<StoredClient> {
    if (this.options.clients.isFileClient(clientId)) throw new ClientReadOnly()
    const stored = await this.options.store.oauthClients.find(clientId)
    if (stored === undefined) throw new NotFound('Client not found')
    return stored
  }

  private audit (event: 'oidc_client_created' | 'oidc_client_updated' | 'oidc_client_deleted' | 'oidc_client_secret_rotated', clientId: string, changer: Changer, note?: string): void {
    this.options.audit({ event, actorId: changer.actorId, detail: note === undefined ? clientId : `${clientId}: ${note}` }, changer.context)
  }
}
