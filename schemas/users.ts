import { Type, type Static } from '@sinclair/typebox'
import { Age, Email, Name, NewPassword, ref, Roles, Timestamp, Uuid } from './common.js'

export const CreateUserRequest = Type.Object({
  email: Email,
  password: NewPassword,
  name: Name,
  age: Type.Optional(Age)
}, { additionalProperties: false })
export type CreateUserRequest = Static<typeof CreateUserRequest>

/** Serialized through this schema, so a password hash can never reach a client. */
export const UserResponse = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Type.String(),
  age: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
  roles: Roles,
  is_superuser: Type.Boolean(),
  /** the address was proved with an email code (false until then, whichever features are on) */
  email_verified: Type.Boolean()
}, { $id: 'User' })
export type UserResponse = Static<typeof UserResponse>

/** POST /api/users: CreateUserRequest plus the grants an admin (roles) or superuser may give. */
export const AdminCreateUserRequest = Type.Object({
  ...CreateUserRequest.properties,
  roles: Type.Optional(Roles),
  is_superuser: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type AdminCreateUserRequest = Static<typeof AdminCreateUserRequest>

export const UpdateUserRequest = Type.Object({
  name: Type.Optional(Name),
  age: Type.Optional(Age),
  roles: Type.Optional(Roles),
  is_superuser: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type UpdateUserRequest = Static<typeof UpdateUserRequest>

export const UserListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1000000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 15 })
}, { additionalProperties: false })
export type UserListQuery = Static<typeof UserListQuery>

/** The pagination block's formulas, as docs/api.md gives them. */
export const PaginationMeta = Type.Object({
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
  from: Type.Integer(),
  to: Type.Integer()
}, { $id: 'PaginationMeta' })

export const UserListResponse = Type.Object({
  data: Type.Array(ref(UserResponse)),
  pagination: ref(PaginationMeta)
}, { $id: 'UserList' })
export type UserListResponse = Static<typeof UserListResponse>
