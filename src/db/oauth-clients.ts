import type { Kysely, Selectable } from 'kysely'
import type { AuthMethod, ClientFields, ClientType } from '../config/oidc-client-rules.js'
import type { OauthClientsTable } from './feature-tables.js'
import type { Database } from './schema.js'

/** A stored client: its fields, the keyed hash of its secret (with the data key's id) and its times. */
export interface StoredClient extends ClientFields {
  secretHash: string | null
  secretKeyId: string | null
  createdAt: string
  updatedAt: string
}

const list = (value: string): string[] => JSON.parse(value) as string[]

function clientOf (row: Selectable<OauthClientsTable>): StoredClient {
  return {
    clientId: row.client_id,
    name: row.name,
    type: row.type as ClientType,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as AuthMethod,
    redirectUris: list(row.redirect_uris),
    postLogoutRedirectUris: list(row.post_logout_redirect_uris),
    webOrigins: list(row.web_origins),
    scopes: list(row.scopes),
    allowedRoles: list(row.allowed_roles),
    requireAal2: row.require_aal2 === 1,
    skipConsent: row.skip_consent === 1,
    grantTypes: list(row.grant_types),
    roles: list(row.roles),
    accessTokenTtl: row.access_token_ttl === null ? undefined : Number(row.access_token_ttl),
    disabled: row.disabled === 1,
    secretHash: row.secret_hash,
    secretKeyId: row.secret_key_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

function columnsOf (client: ClientFields) {
  return {
    name: client.name,
    type: client.type,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    web_origins: JSON.stringify(client.webOrigins),
    scopes: JSON.stringify(client.scopes),
    allowed_roles: JSON.stringify(client.allowedRoles),
    require_aal2: client.requireAal2 ? 1 : 0,
    skip_consent: client.skipConsent ? 1 : 0,
    grant_types: JSON.stringify(client.grantTypes),
    roles: JSON.stringify(client.roles),
    access_token_ttl: client.accessTokenTtl ?? null,
    disabled: client.disabled ? 1 : 0
  }
}

/** The OpenID Connect clients made by the API or the CLI (those of OIDC_CLIENTS_FILE have no row). */
export class OauthClientRepository {
  constructor (private readonly db: Kysely<Database>) {}

  async list (): Promise<StoredClient[]> {
    const rows = await this.db.selectFrom('oauth_clients').selectAll().orderBy('created_at').orderBy('client_id').execute()
    return rows.map(clientOf)
  }

  async find (clientId: string): Promise<StoredClient | undefined> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst()
    return row && clientOf(row)
  }

  /** false when the client_id is taken */
  async insert (client: StoredClient): Promise<boolean> {
    const result = await this.db.insertInto('oauth_clients').values({
      client_id: client.clientId,
      ...columnsOf(client),
      secret_hash: client.secretHash,
      secret_key_id: client.secretKeyId,
      created_at: client.createdAt,
      updated_at: client.updatedAt
    }).onConflict((oc) => oc.column('client_id').doNothing()).executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  async update (client: ClientFields, now: string): Promise<boolean> {
    const result = await this.db.updateTable('oauth_clients').set({ ...columnsOf(client), updated_at: now })
      .where('client_id', '=', client.clientId).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async setSecret (clientId: string, secret: { hash: string, keyId: string }, now: string): Promise<boolean> {
    const result = await this.db.updateTable('oauth_clients').set({ secret_hash: secret.hash, secret_key_id: secret.keyId, updated_at: now })
      .where('client_id', '=', clientId).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async remove (clientId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('oauth_clients').where('client_id', '=', clientId).executeTakeFirst()
    return result.numDeletedRows > 0n
  }
}
