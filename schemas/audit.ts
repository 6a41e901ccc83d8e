import { Type, type Static } from '@sinclair/typebox'
import { ref, Timestamp, Uuid } from './common.js'
import { PaginationMeta, UserListQuery } from './users.js'

/** Every security event the audit trail records (src/observers/audit-trail.ts writes them, GET /api/audit filters by them). */
export const AUDIT_EVENTS = [
  'login_succeeded',
  'login_failed',
  'mfa_challenge_issued',
  'refreshed',
  'refresh_reuse_detected',
  'logged_out',
  'registered',
  'sessions_revoked',
  'password_changed',
  'password_change_failed',
  'user_created',
  'grants_changed',
  'user_deleted',
  'password_reset_requested',
  'password_reset_completed',
  'password_reset_failed',
  'email_code_requested',
  'email_code_failed',
  'email_verified',
  'access_denied',
  'session_revoked',
  'signing_key_rotated',
  'signing_key_revoked',
  'totp_enabled',
  'totp_disabled',
  'totp_failed',
  'recovery_codes_regenerated',
  'return_url_refused',
  'redirect_loop_detected',
  'passkey_registered',
  'passkey_removed',
  'passkey_clone_suspected',
  'api_key_created',
  'api_key_revoked',
  'service_account_created',
  'users_imported',
  'password_rehashed',
  'oidc_client_created',
  'oidc_client_updated',
  'oidc_client_deleted',
  'oidc_client_secret_rotated',
  'oidc_consent_granted',
  'oidc_grant_revoked',
  'oidc_authorized',
  'oidc_code_replayed',
  'idp_linked',
  'idp_auto_linked',
  'idp_link_refused',
  'idp_unlinked'
] as const

/** Whether the action an event records took place (a refused sign-in, a wrong current password: failure). */
export const AUDIT_OUTCOMES = ['success', 'failure'] as const
export const AuditOutcome = Type.Union(AUDIT_OUTCOMES.map((outcome) => Type.Literal(outcome)))
export type AuditOutcome = Static<typeof AuditOutcome>

export const AuditEventName = Type.Union(AUDIT_EVENTS.map((event) => Type.Literal(event)))
export type AuditEventName = Static<typeof AuditEventName>

/** GET /api/audit: the users list's paging (same bounds and defaults) plus three filters. */
export const AuditListQuery = Type.Object({
  ...UserListQuery.properties,
  user_id: Type.Optional(Uuid),
  actor_id: Type.Optional(Uuid),
  event: Type.Optional(AuditEventName)
}, { additionalProperties: false })
export type AuditListQuery = Static<typeof AuditListQuery>

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])

export const AuditEventResponse = Type.Object({
  id: Uuid,
  at: Timestamp,
  event: AuditEventName,
  outcome: AuditOutcome,
  /** the user who acted (the signed-in caller); null for an anonymous request and the command line */
  actor_id: Nullable(Uuid),
  /** the user the event is about (the target) */
  user_id: Nullable(Uuid),
  session_id: Nullable(Uuid),
  /** the email a failed sign-in was attempted with */
  email: Nullable(Type.String()),
  /** the client address (`cli` for the command line) */
  address: Nullable(Type.String()),
  detail: Nullable(Type.String())
}, { $id: 'AuditEvent' })
export type AuditEventResponse = Static<typeof AuditEventResponse>

export const AuditListResponse = Type.Object({
  data: Type.Array(ref(AuditEventResponse)),
  pagination: ref(PaginationMeta)
}, { $id: 'AuditList' })
export type AuditListResponse = Static<typeof AuditListResponse>
