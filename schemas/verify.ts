import { Type, type Static } from '@sinclair/typebox'

/** The longest `roles` list GET /auth/verify reads. */
export const ROLES_MAX_LENGTH = 1024

/**
 * GET /auth/verify's query. Other parameters are ignored, not refused: a proxy may add its own,
 * and a refusal (422) would reach the browser as nginx's 500.
 */
export const VerifyQuery = Type.Object({
  roles: Type.Optional(Type.String({
    maxLength: ROLES_MAX_LENGTH,
    description: 'Roles, comma-separated (`admin,editor`): the token must hold at least one (a superuser passes). Empty or absent: any signed-in user passes.'
  })),
  mode: Type.Optional(Type.Union([Type.Literal('forward_auth'), Type.Literal('auth_request')], {
    default: 'forward_auth',
    description: 'Read only with FORWARD_AUTH_REDIRECT=true: how a browser navigation without a valid session is sent to the sign-in page. ' +
      '`forward_auth` (Caddy, Traefik): 302 (303 when the original method is neither GET nor HEAD) to `<PUBLIC_URL>/portal/login?rd=<the request\'s URL>`; ' +
      '`auth_request` (nginx): the 401, with that Location for the proxy to turn into a redirect. Another value: 422'
  }))
})
export type VerifyQuery = Static<typeof VerifyQuery>

const identity = (description: string) => Type.String({ description })

/** The identity a 200 carries, one header each, for the proxy to pass to the application. */
export const IdentityHeaders = {
  'X-Auth-User-Id': identity('The user\'s id (UUID)'),
  'X-Auth-Email': identity('The user\'s email, as signed into the token'),
  'X-Auth-Roles': identity('The token\'s roles in order, joined by "," without spaces; empty when it has none'),
  'X-Auth-Session-Id': identity('The session\'s id (UUID)'),
  'X-Auth-Superuser': Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Whether the user is a superuser' }),
  'Cache-Control': Type.Literal('no-store', { description: 'No cache may keep the answer: the next request is checked again' })
}
