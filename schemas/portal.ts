import { Type, type Static, type TProperties } from '@sinclair/typebox'
import { ChangePasswordRequest } from './auth.js'
import { Email, Password, Uuid } from './common.js'
import { EmailCode, ForgotPasswordRequest, ResetPasswordRequest } from './recovery.js'
import { EnableTotpRequest, EXACTLY_ONE_CODE, RecoveryCode, RecoveryCodesRequest, TotpCode } from './two-factor.js'
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
export const RevokeAppForm = portalForm({ client_id: Type.String({ minLength: 1, maxLength: 64 }) })
export const ChangePasswordForm = portalForm(ChangePasswordRequest.properties)
export const TotpEnrolForm = portalForm(EnableTotpRequest.properties)
export const TotpConfirmForm = portalForm({ code: RecoveryCodesRequest.properties.code })
export const RecoveryCodesForm = portalForm(RecoveryCodesRequest.properties)
/** One `code` field for either proof POST /auth/disable-2fa takes: six digits are the app's code, anything else a recovery code. */
export const TotpDisableForm = portalForm({ password: Password, code: Type.String({ notBlank: true, maxLength: 64 }) })

/** The second-factor page: a TOTP code or a recovery code, exactly one (as POST /auth/verify-2fa). */
export const TwoFactorForm = Type.Object({
  csrf: Type.String({ maxLength: 64 }),
  code: Type.Optional(TotpCode),
  recovery_code: Type.Optional(RecoveryCode)
}, { additionalProperties: false, ...EXACTLY_ONE_CODE })
export type TwoFactorForm = Static<typeof TwoFactorForm>

export const TwoFactorQuery = Type.Object({ use: Type.Optional(Type.String({ maxLength: 16 })) })
export type TwoFactorQuery = Static<typeof TwoFactorQuery>

export const EmailCodeRequestForm = portalForm({ email: Email })
export type EmailCodeRequestForm = Static<typeof EmailCodeRequestForm>

export const EmailCodeForm = Type.Object({ csrf: Type.String({ maxLength: 64 }), code: EmailCode }, { additionalProperties: false })
export type EmailCodeForm = Static<typeof EmailCodeForm>

/** Sign out here (`local`, the default) or on every device (`global`), as POST /auth/logout's scope. */
export const LogoutForm = portalForm({ scope: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('global')])) })
export type LogoutForm = Static<typeof LogoutForm>

/**
 * The forbidden page: where access was denied, why, and which roles would have passed
 * (comma-separated, as /auth/verify's `roles`). The page is a 403 whatever the query says, so
 * nothing here is refused: a value of the wrong shape (or longer than /auth/verify reads) is left out.
 */
export const ForbiddenQuery = Type.Object({
  rd: Type.Optional(Type.Unknown()),
  reason: Type.Optional(Type.Unknown()),
  roles: Type.Optional(Type.Unknown())
})
export type ForbiddenQuery = Static<typeof ForbiddenQuery>

/** The consent page (docs/oidc.md#the-flow): the pending interaction, and Allow or Deny. */
export const ConsentQuery = Type.Object({ interaction: Type.String({ maxLength: 64 }) })
export type ConsentQuery = Static<typeof ConsentQuery>

export const ConsentForm = Type.Object({
  csrf: Type.String({ maxLength: 64 }),
  interaction: Type.String({ maxLength: 64 }),
  decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')])
}, { additionalProperties: false })
export type ConsentForm = Static<typeof ConsentForm>
