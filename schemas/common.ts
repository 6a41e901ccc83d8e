import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'

/*
 * Bounded primitives. Every string and array here has an upper bound, which is what makes
 * reporting every failing rule (Ajv allErrors) safe against hostile input.
 */

/** A required string that is empty or only spaces fails `required`, not `min`. */
export const Email = Type.String({ notBlank: true, format: 'email', maxLength: 254 })
export const Password = Type.String({ notBlank: true, maxLength: 1024 })
/** `notBreached`: refused when BREACHED_PASSWORDS_FILE lists it (src/validation/not-breached.ts) */
export const NewPassword = Type.String({ notBlank: true, minLength: 8, maxLength: 1024, notBreached: true })
export const Name = Type.String({ notBlank: true, minLength: 2, maxLength: 100 })
export const Age = Type.Integer({ minimum: 18, maximum: 120 })
export const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
export const Role = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', maxLength: 32 })
export const Roles = Type.Array(Role, { maxItems: 32, uniqueItems: true })
export const Timestamp = Type.String({ format: 'date-time' })

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })
export type IdParams = Static<typeof IdParams>

export const Message = Type.Object({ message: Type.String() }, { $id: 'Message' })

/** The cookie pair (plugins/cookies.ts), documented where a response sets or clears it. */
export const SetCookie = (description: string) => Type.String({ description: `${description}: access_token (path /) and refresh_token (path /auth), HttpOnly, SameSite=Lax, Secure in production` })

/** What a response's `headers` lists: a header's schema and description (@fastify/swagger documents them). */
export interface ResponseOptions extends SchemaOptions { headers?: Record<string, TSchema> }

/**
 * A `$ref` to a shared schema (one with an `$id`, added once by plugins/openapi.ts), with the
 * same static type: the document holds the schema once, as a named component every use refers
 * to, so generated clients get one `User` type instead of one per operation. The serializer
 * resolves the same reference, so the response is still filtered by the schema.
 */
export function ref<T extends TSchema> (schema: T, options: ResponseOptions = {}): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new TypeError('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ ...options, $ref: schema.$id })
}
