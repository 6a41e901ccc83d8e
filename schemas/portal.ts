import { Type, type Static, type TProperties } from '@sinclair/typebox'
import { Email, Password } from './common.js'

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
