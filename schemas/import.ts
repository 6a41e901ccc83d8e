import { Type, type Static } from '@sinclair/typebox'
import { Timestamp, Uuid } from './common.js'
import { AdminCreateUserRequest, CreateUserRequest } from './users.js'

const { email, name, age, password } = CreateUserRequest.properties
const { roles, is_superuser: isSuperuser } = AdminCreateUserRequest.properties

/**
 * One user of an import (docs/migrating.md): CreateUserRequest's fields and rules, the grants
 * POST /api/users takes, what the old system knew (id, created_at, email_verified), and at most
 * one of a password hash in a supported format or a plain password; neither is no password.
 */
export const ImportUser = Type.Object({
  email,
  name,
  age,
  id: Type.Optional(Uuid),
  roles,
  is_superuser: isSuperuser,
  email_verified: Type.Optional(Type.Boolean()),
  created_at: Type.Optional(Timestamp),
  password_hash: Type.Optional(Type.String({ maxLength: 1024, description: 'bcrypt, argon2id/i/d, scrypt or PBKDF2-SHA256/512 (docs/migrating.md)' })),
  password: Type.Optional(password)
}, { $id: 'ImportUser', additionalProperties: false })
export type ImportUser = Static<typeof ImportUser>

export const MAX_IMPORT_USERS = 1000

export const ImportRequest = Type.Object({
  users: Type.Array(Type.Unsafe<ImportUser>({ $ref: 'ImportUser' }), { minItems: 1, maxItems: MAX_IMPORT_USERS }),
  dry_run: Type.Optional(Type.Boolean({ description: 'answer exactly as the import would, writing nothing' })),
  partial: Type.Optional(Type.Boolean({ description: 'write the valid lines and report the refused ones (200), instead of all or nothing' }))
}, { additionalProperties: false })
export type ImportRequest = Static<typeof ImportRequest>

/** What the route's own validator checks: the envelope; every line is the import's to check (src/imports/). */
export const ImportEnvelope = Type.Object({
  ...ImportRequest.properties,
  users: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_IMPORT_USERS })
}, { additionalProperties: false })

const FieldErrors = Type.Record(Type.String(), Type.Array(Type.String()))

export const ImportResult = Type.Object({
  created: Type.Integer({ description: 'users written (or, in a dry run, that would be)' }),
  refused: Type.Integer(),
  results: Type.Array(Type.Union([
    Type.Object({ index: Type.Integer(), id: Uuid }),
    Type.Object({ index: Type.Integer(), errors: FieldErrors })
  ]))
}, { $id: 'ImportResult' })
export type ImportResult = Static<typeof ImportResult>
