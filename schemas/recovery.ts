import { Type, type Static } from '@sinclair/typebox'
import { Email, NewPassword } from './common.js'

/*
 * Password reset and email codes (docs/recovery.md). The secrets are bounded strings, and a
 * wrong one of the right shape is the catalogue's 400 (invalid_reset_token, invalid_otp), not a
 * 422: a client cannot tell a malformed secret from a spent one.
 */

export const ForgotPasswordRequest = Type.Object({
  email: Email
}, { additionalProperties: false })
export type ForgotPasswordRequest = Static<typeof ForgotPasswordRequest>

export const ResetPasswordRequest = Type.Object({
  token: Type.String({ notBlank: true, maxLength: 256 }),
  new_password: NewPassword,
  /** for an account with TOTP on (ENABLE_TOTP): a current TOTP code or a recovery code */
  code: Type.Optional(Type.String({ notBlank: true, maxLength: 64 }))
}, { additionalProperties: false })
export type ResetPasswordRequest = Static<typeof ResetPasswordRequest>

export const CodePurpose = Type.Union([Type.Literal('login'), Type.Literal('verify_email')])

export const SendOtpRequest = Type.Object({
  email: Email,
  purpose: CodePurpose
}, { additionalProperties: false })
export type SendOtpRequest = Static<typeof SendOtpRequest>

/** An email code: six digits, but any bounded string is taken (a wrong shape is invalid_otp, not a 422). */
export const EmailCode = Type.String({ notBlank: true, maxLength: 32 })

export const VerifyOtpRequest = Type.Object({
  email: Email,
  code: EmailCode,
  purpose: CodePurpose,
  remember: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type VerifyOtpRequest = Static<typeof VerifyOtpRequest>

export const EmailVerifiedResponse = Type.Object({
  email_verified: Type.Literal(true)
}, { $id: 'EmailVerified' })
export type EmailVerifiedResponse = Static<typeof EmailVerifiedResponse>
