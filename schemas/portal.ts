import { Type, type Static, type TProperties } from '@sinclair/typebox'
import { ChangePasswordRequest } from './auth.js'
import { Email, Password, Uuid } from './common.js'
import { ForgotPasswordRequest, ResetPasswordRequest } from './recovery.js'
import { EnableTotpRequest, RecoveryCodesRequest } from './two-factor.js'
import { CreateUserRequest } from './users.js'

/*
 * The portal's forms and queries. A return URL is never refused by its schema: a value the rule of
 * docs/portal.md#return-urls does not take is replaced by the default, so `rd` is any string here.
 */
const ReturnUrl = Type.String()

/** Every form: the CSRF token (checked before validation, in constant time) and where to go afterwards. */
export function portalForm<T extends TProperties> (fields: T) {
  return Type.Object({ csrf: Type.String({ maxLength: 64 }), rd: Type.Optional(ReturnUrl), ...fields }, { additionalProperties: false })
}

export const ReturnQuery = Type.Object({ rd: Type.Optional(ReturnUrl) })
export type ReturnQuery = Static<typeof ReturnQuery>

export const LoginQuery = Type.Object({
  rd: Type.Optional(ReturnUrl),
  prompt: Type.Optional(Type.String({ maxLength: 32 })),
  login_hint: Type.Optional(Type.String({ maxLength: 254 })),
  done: Type.Optional(Type.String({ maxLength: 32 }))
})
export type LoginQuery = Static<typeof LoginQuery>

export const LoginForm = portalForm({ email: Email, password: Password })
export type LoginForm = Static<typeof LoginForm>

/*
 * Registration, password recovery and the account page. Each field is the JSON route's own schema,
 * so a 422 says what the JSON route says, beside the same field name.
 */
export const RegisterForm = portalForm({
  name: CreateUserRequest.properties.name,
  email: CreateUserRequest.properties.email,
  password: CreateUserRequest.properties.password
})
export type RegisterForm = Static<typeof RegisterForm>

export const ForgotForm = portalForm({ email: ForgotPasswordRequest.properties.email })
export type ForgotForm = Static<typeof ForgotForm>

export const ForgotQuery = Type.Object({ sent: Type.Optional(Type.String({ maxLength: 8 })) })
export type ForgotQuery = Static<typeof ForgotQuery>

/**
 * The reset form: `token` is the hidden field reset.js fills from the address bar's fragment;
 * without JavaScript, `reset_link` is the link pasted whole (or the bare token). `code` is sent
 * empty by every browser whose account has no second factor, so empty means absent here.
 */
export const ResetForm = portalForm({
  token: Type.Optional(Type.String({ maxLength: 256 })),
  reset_link: Type.Optional(Type.String({ maxLength: 4096 })),
  new_password: ResetPasswordRequest.properties.new_password,
  code: Type.Optional(Type.String({ maxLength: 64 }))
})
export type ResetForm = Static<typeof ResetForm>

export const AccountQuery = Type.Object({ done: Type.Optional(Type.String({ maxLength: 32 })) })
export type AccountQuery = Static<typeof AccountQuery>

/** The account page's actions: each form has the fields of its JSON route. */
export const RevokeSessionForm = portalForm({ session: Uuid })
export const RevokeOthersForm = portalForm({})
export const ChangePasswordForm = portalForm(ChangePasswordRequest.properties)
export const TotpEnrolForm = portalForm(EnableTotpRequest.properties)
export const TotpConfirmForm = portalForm({ code: RecoveryCodesRequest.properties.code })
export const RecoveryCodesForm = portalForm(RecoveryCodesRequest.properties)
/** One `code` field for either proof POST /auth/disable-2fa takes: six digits are the app's code, anything else a recovery code. */
export const TotpDisableForm = portalForm({ password: Password, code: Type.String({ notBlank: true, maxLength: 64 }) })
