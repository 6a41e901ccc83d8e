import { Type, type Static } from '@sinclair/typebox'
import { Name, Password, ref, Roles, Timestamp, Uuid } from './common.js'
import { UserListQuery, UserResponse } from './users.js'

/** An API key's id: 12 lower-case letters and digits (docs/api-keys.md#the-format) */
export const ApiKeyId = Type.String({ pattern: '^[0-9a-z]{12}$', maxLength: 12 })

/** Never the key itself, which is shown once, at creation. */
export const ApiKeyResponse = Type.Object({
  id: ApiKeyId,
  name: Type.String(),
  roles: Roles,
  created_at: Timestamp,
  expires_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'written at most once a minute' })
}, { $id: 'ApiKey' })
export type ApiKeyResponse = Static<typeof ApiKeyResponse>

export const CreatedApiKey = Type.Object({
  ...ApiKeyResponse.properties,
  key: Type.String({ description: 'the key, `gh_<id>_<secret>`: shown this once, never again' })
}, { $id: 'CreatedApiKey' })
export type CreatedApiKey = Static<typeof CreatedApiKey>

export const ApiKeyList = Type.Object({ data: Type.Array(ref(ApiKeyResponse)) }, { $id: 'ApiKeyList' })

const KeyFields = {
  name: Type.String({ notBlank: true, minLength: 1, maxLength: 100 }),
  roles: Type.Optional(Roles),
  expires_at: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 }))
}

/** POST /api/auth/api-keys: `password` proves recent authentication when the sign-in is older than REAUTH_MAX_AGE. */
export const CreateApiKeyRequest = Type.Object({ ...KeyFields, password: Type.Optional(Password) }, { additionalProperties: false })
export type CreateApiKeyRequest = Static<typeof CreateApiKeyRequest>

export const AdminCreateApiKeyRequest = Type.Object(KeyFields, { additionalProperties: false })
export type AdminCreateApiKeyRequest = Static<typeof AdminCreateApiKeyRequest>

export const CreateServiceAccountRequest = Type.Object({ name: Name, roles: Type.Optional(Roles) }, { additionalProperties: false })
export type CreateServiceAccountRequest = Static<typeof CreateServiceAccountRequest>

export const ApiKeyParams = Type.Object({ id: ApiKeyId }, { additionalProperties: false })
export const UserApiKeyParams = Type.Object({ id: Uuid, key_id: ApiKeyId }, { additionalProperties: false })

export const UserKind = Type.Union([Type.Literal('user'), Type.Literal('service')])

/** UserResponse while ENABLE_API_KEYS is on (the same `User` component): `kind` tells a service account. */
export const UserResponseWithKind = Type.Object({ ...UserResponse.properties, kind: UserKind }, { $id: 'User' })

/** GET /api/users while ENABLE_API_KEYS is on: `kind=service` lists the service accounts. */
export const UserListQueryWithKind = Type.Object({ ...UserListQuery.properties, kind: Type.Optional(UserKind) }, { additionalProperties: false })
