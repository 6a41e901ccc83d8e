import { Type, type Static } from '@sinclair/typebox'

/*
 * Bounded primitives. Every string and array here has an upper bound, which is what makes
 * reporting every failing rule (Ajv allErrors) safe against hostile input.
 */

/** A required string that is empty or only spaces fails `required`, not `min`. */
export const Email = Type.String({ notBlank: true, format: 'email', maxLength: 254 })
export const Password = Type.String({ notBlank: true, maxLength: 1024 })
export const NewPassword = Type.String({ notBlank: true, minLength: 8, maxLength: 1024 })
export const Name = Type.String({ notBlank: true, minLength: 2, maxLength: 100 })
export const Age = Type.Integer({ minimum: 18, maximum: 120 })
export const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
export const Role = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', maxLength: 32 })
export const Roles = Type.Array(Role, { maxItems: 32, uniqueItems: true })
export const Timestamp = Type.String({ format: 'date-time' })

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })
export type IdParams = Static<typeof IdParams>

export const Message = Type.Object({ message: Type.String() })
