import { STATUS_CODES } from 'node:http'
import { Type, type Static, type TSchema } from '@sinclair/typebox'

/**
 * Why a request was refused with 403: every such body names one. The first four are `forbidden`
 * errors; `csrf_rejected`, `registration_disabled` and `reauth_required` are their own codes;
 * `mfa_required` is kept for the second factor.
 */
export const DENIAL_REASONS = ['missing_role', 'not_owner', 'superuser_required', 'session_required', 'csrf_rejected', 'registration_disabled', 'mfa_required', 'reauth_required'] as const
export type DenialReason = typeof DENIAL_REASONS[number]

/** Every error body (docs/api.md). `errors` only on 422, `request_id` only on 500, `reason` on every 403. */
export const ErrorResponse = Type.Object({
  error: Type.String(),
  message: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
  details: Type.Optional(Type.Array(Type.Object({
    field: Type.String(),
    tag: Type.String(),
    value: Type.String(),
    message: Type.String()
  }))),
  request_id: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String({ enum: [...DENIAL_REASONS], description: 'On every 403: why access was denied' })),
  required_roles: Type.Optional(Type.Array(Type.String(), { description: 'With `missing_role` (unless AUTHZ_DENIAL_DETAILS=false): any one of these roles would have passed' }))
}, { $id: 'ErrorResponse', description: 'Every error: a title, a message, a stable code' })
export type ErrorResponse = Static<typeof ErrorResponse>

/**
 * A reference to the shared ErrorResponse (added with `addSchema` by plugins/openapi.ts), so the
 * OpenAPI document holds it once as a component. The serializer resolves the same reference,
 * and the schema keeps `errors`, so a 422 keeps its field map.
 */
function errorRef (status: number): TSchema {
  return Type.Unsafe<ErrorResponse>(Type.Ref('ErrorResponse', { description: STATUS_CODES[status] ?? 'Error' }))
}

/** The error statuses a route can answer, each with the ErrorResponse body. */
export function errorResponses (...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, errorRef(s)]))
}
