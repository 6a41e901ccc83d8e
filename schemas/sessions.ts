import { Type, type Static } from '@sinclair/typebox'
import { ref, Timestamp, Uuid } from './common.js'

/** One live session as its owner or an admin sees it: where and when it was used, never a token. */
export const SessionResponse = Type.Object({
  /** the tokens' `session_id` */
  id: Uuid,
  /** whether it is the session of the token this request presented (always false in an admin's listing) */
  current: Type.Boolean(),
  created_at: Timestamp,
  /** the sign-in or the last refresh; never written per request */
  last_used_at: Timestamp,
  /** when its refresh token expires */
  expires_at: Timestamp,
  ip: Type.Union([Type.String(), Type.Null()], { description: 'The client address at sign-in or the last refresh (as the rate limiter sees it)' }),
  user_agent: Type.Union([Type.String(), Type.Null()], { description: 'The User-Agent then, at most 256 characters' }),
  aal: Type.String({ description: 'Authentication assurance level of the sign-in: `aal1`, or `aal2` after a second factor' }),
  amr: Type.Array(Type.String(), { description: 'Authentication methods of the sign-in (RFC 8176), e.g. `["pwd"]`' }),
  client_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With ENABLE_OIDC_PROVIDER: the client of a child session (an authorized app), else null' })),
  client_name: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With ENABLE_OIDC_PROVIDER: that client\'s name, else null' }))
}, { $id: 'Session', additionalProperties: false })
export type SessionResponse = Static<typeof SessionResponse>

export const SessionListResponse = Type.Object({
  data: Type.Array(ref(SessionResponse), { description: 'Newest first' })
}, { $id: 'SessionList' })
export type SessionListResponse = Static<typeof SessionListResponse>

export const RevokedSessions = Type.Object({
  revoked: Type.Integer({ minimum: 0, description: 'How many sessions were ended' })
}, { $id: 'RevokedSessions' })
export type RevokedSessions = Static<typeof RevokedSessions>
