import { Type, type Static } from '@sinclair/typebox'
import { ref, Role, Timestamp } from './common.js'

/*
 * The OpenID Connect provider's clients and the consents users gave them (docs/oidc.md). The
 * client rules the schema cannot say (redirect URIs, the method a type allows) are in
 * src/oidc/client-rules.ts, which the API, the clients file and the CLI share.
 */

export const CLIENT_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{2,63}$'
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'roles', 'offline_access'] as const
export const CLIENT_TYPES = ['public', 'confidential'] as const
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)))

export const ClientId = Type.String({ pattern: CLIENT_ID_PATTERN, maxLength: 64 })
const ClientName = Type.String({ notBlank: true, minLength: 1, maxLength: 100 })
/** absolute, no fragment, https or http on loopback/localhost: src/oidc/client-rules.ts */
const Uri = Type.String({ minLength: 1, maxLength: 2048 })
const Uris = (min: number) => Type.Array(Uri, { minItems: min, maxItems: 10, uniqueItems: true })
const Scopes = Type.Array(literals(OIDC_SCOPES), { maxItems: OIDC_SCOPES.length, uniqueItems: true })
const GrantTypes = Type.Array(literals(GRANT_TYPES), { minItems: 1, maxItems: GRANT_TYPES.length, uniqueItems: true })
const ClientRoles = Type.Array(Role, { maxItems: 32, uniqueItems: true })
/** seconds */
const AccessTokenTtl = Type.Integer({ minimum: 60, maximum: 86400 })

/** What may be changed after creation: everything but the id and the type (PATCH). */
const mutable = {
  name: ClientName,
  token_endpoint_auth_method: literals(AUTH_METHODS),
  redirect_uris: Uris(1),
  post_logout_redirect_uris: Uris(0),
  web_origins: Uris(0),
  scopes: Scopes,
  allowed_roles: ClientRoles,
  require_aal2: Type.Boolean(),
  skip_consent: Type.Boolean(),
  grant_types: GrantTypes,
  roles: ClientRoles,
  access_token_ttl: AccessTokenTtl,
  disabled: Type.Boolean()
}

const { name, redirect_uris: redirectUris, ...optional } = mutable

export const UpdateClientRequest = Type.Partial(Type.Object(mutable), { additionalProperties: false, minProperties: 1 })
export type UpdateClientRequest = Static<typeof UpdateClientRequest>

export const CreateClientRequest = Type.Object({
  client_id: Type.Optional(ClientId),
  type: literals(CLIENT_TYPES),
  name,
  redirect_uris: redirectUris,
  ...Type.Partial(Type.Object(optional)).properties
}, { additionalProperties: false })
export type CreateClientRequest = Static<typeof CreateClientRequest>

/** One line of OIDC_CLIENTS_FILE: a client, its secret only by reference (never in the file). */
export const FileClient = Type.Object({
  ...CreateClientRequest.properties,
  client_secret_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$', maxLength: 128 })),
  client_secret_file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 }))
}, { additionalProperties: false })

export const OidcClient = Type.Object({
  client_id: ClientId,
  name: Type.String({ maxLength: 100 }),
  type: literals(CLIENT_TYPES),
  token_endpoint_auth_method: literals(AUTH_METHODS),
  redirect_uris: Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 }),
  post_logout_redirect_uris: Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 }),
  web_origins: Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 }),
  scopes: Type.Array(Type.String({ maxLength: 32 }), { maxItems: OIDC_SCOPES.length }),
  allowed_roles: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 32 }),
  require_aal2: Type.Boolean(),
  skip_consent: Type.Boolean(),
  grant_types: Type.Array(Type.String({ maxLength: 32 }), { maxItems: GRANT_TYPES.length }),
  roles: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 32 }),
  access_token_ttl: Type.Integer({ description: 'seconds; ACCESS_TOKEN_TTL unless set' }),
  disabled: Type.Boolean(),
  read_only: Type.Boolean({ description: 'from OIDC_CLIENTS_FILE: changed only there' }),
  created_at: Type.Union([Timestamp, Type.Null()], { description: 'null for a client of OIDC_CLIENTS_FILE' }),
  updated_at: Type.Union([Timestamp, Type.Null()])
}, { $id: 'OidcClient', description: 'A relying party of the OpenID Connect provider (docs/oidc.md#clients); never its secret' })
export type OidcClientBody = Static<typeof OidcClient>

export const ClientSecret = Type.Object({
  client_secret: Type.String({ maxLength: 64, description: '256 random bits, base64url: shown once, kept only as a keyed hash' })
}, { $id: 'OidcClientSecret' })

export const CreatedClient = Type.Object({
  ...OidcClient.properties,
  client_secret: Type.Optional(ClientSecret.properties.client_secret)
}, { $id: 'OidcCreatedClient', description: 'The new client; client_secret (confidential clients) is shown this once' })

export const ClientList = Type.Object({ data: Type.Array(ref(OidcClient), { maxItems: 10000 }) }, { $id: 'OidcClientList' })

export const ClientIdParams = Type.Object({ client_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })
export type ClientIdParams = Static<typeof ClientIdParams>

export const OidcGrant = Type.Object({
  client_id: ClientId,
  client_name: Type.String({ maxLength: 100 }),
  scopes: Type.Array(Type.String({ maxLength: 32 }), { maxItems: OIDC_SCOPES.length }),
  granted_at: Timestamp
}, { $id: 'OidcGrant', description: 'An app the user authorized, with the scopes consented to' })

export const GrantList = Type.Object({ data: Type.Array(ref(OidcGrant), { maxItems: 10000 }) }, { $id: 'OidcGrantList' })
