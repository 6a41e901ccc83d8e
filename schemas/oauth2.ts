import { Type } from '@sinclair/typebox'
import { Email, Name, Roles, Uuid } from './common.js'

/**
 * GET and POST /oauth2/userinfo's answer (OIDC Core §5.3.2): `sub` and the claims of the granted
 * scopes (src/oidc/oidc-tokens.ts userClaims). Also the output filter: nothing else can leave.
 */
export const UserinfoResponse = Type.Object({
  sub: Uuid,
  email: Type.Optional(Email),
  email_verified: Type.Optional(Type.Boolean()),
  name: Type.Optional(Name),
  roles: Type.Optional(Roles)
}, { additionalProperties: false })
