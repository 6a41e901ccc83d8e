import { Type, type Static } from '@sinclair/typebox'
import { Email, NewPassword, Password, ref } from './common.js'
import { UserResponse } from './users.js'

export const LoginRequest = Type.Object({
  email: Email,
  password: Password,
  remember: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type LoginRequest = Static<typeof LoginRequest>

/**
 * The refresh token may come from the `refresh_token` cookie instead, so its absence is checked
 * in the handler; a blank one in the body still fails `required`.
 */
export const RefreshRequest = Type.Object({
  refresh_token: Type.Optional(Type.String({ notBlank: true, maxLength: 4096 }))
}, { additionalProperties: false })
export type RefreshRequest = Static<typeof RefreshRequest>

export const LogoutQuery = Type.Object({
  scope: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('others'), Type.Literal('global')]))
}, { additionalProperties: false })
export type LogoutQuery = Static<typeof LogoutQuery>

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  expires_at: Type.String({ format: 'date-time' }),
  refresh_expires_at: Type.String({ format: 'date-time' }),
  user: ref(UserResponse)
}, { $id: 'TokenResponse' })
export type TokenResponse = Static<typeof TokenResponse>

export const ChangePasswordRequest = Type.Object({
  current_password: Password,
  new_password: NewPassword
}, { additionalProperties: false })
export type ChangePasswordRequest = Static<typeof ChangePasswordRequest>
