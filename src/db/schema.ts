import type { Generated, Selectable } from 'kysely'
import type { ApiKeysTable, OauthClientsTable, OauthCodesTable, OauthGrantsTable, OauthInteractionsTable, PasskeysTable, UserIdentitiesTable, WebauthnChallengesTable, WebauthnUserHandlesTable } from './feature-tables.js'

// portable subset of SQLite and PostgreSQL: ISO 8601 UTC text times sort as text; better-sqlite3 binds no booleans
export interface UsersTable {
  id: string
  email: string
  name: string
  age: number | null
  password_hash: string
  roles: string
  is_superuser: number
  /** bumped whenever the password changes or a grant is taken away (src/db/users.ts) */
  credentials_version: number
  email_verified: Generated<number>
  /** `user`, or `service` for a service account (no password, no sign-in: docs/api-keys.md) */
  kind: Generated<string>
  created_at: string
  updated_at: string
}

export interface SessionsTable {
  id: string
  user_id: string
  refresh_jti: string
  refresh_claims: string
  /** the jti spent by the last rotation, honoured until rotated_at + REFRESH_REUSE_INTERVAL */
  previous_jti: string | null
  rotated_at: string | null
  created_at: string
  signed_in_at: string
  expires_at: string
  /** the latest `exp` of an access token issued for the session (a revocation lasts until then) */
  access_expires_at: string
  revoked_at: string | null
  ip: string | null
  user_agent: string | null
  /** never written per request */
  last_used_at: string
  /** an OpenID Connect client's child session: the client, and the portal session it was born of */
  client_id: string | null
  parent_session_id: string | null
}

export interface RevocationsTable {
  /** the database's sequence: instances learn new revocations by it, never by their own clocks */
  id: Generated<number>
  session_id: string
  user_id: string
  reason: string
  revoked_at: string
  expires_at: string
}

export interface AuditEventsTable {
  /** UUIDv7: ties of `at` still sort in the order they happened */
  id: string
  at: string
  event: string
  outcome: string
  actor_id: string | null
  /** no foreign key: the trail of a deleted user stays */
  user_id: string | null
  session_id: string | null
  email: string | null
  address: string | null
  detail: string | null
}

export interface MailOutboxTable {
  id: string
  recipient: string
  subject: string | null
  text: string | null
  html: string | null
  created_at: string
  due_at: string
  /** deliveries started (counted at the claim, so a crash during one counts too) */
  attempts: number
  claim_token: string | null
  sent_at: string | null
  abandoned_at: string | null
  last_error: string | null
}

export interface OneTimeSecretsTable {
  id: string
  user_id: string
  purpose: string
  secret_hash: string
  /** the user's credentials_version at issue: a later password change voids the secret */
  credentials_version: number
  created_at: string
  expires_at: string
  attempts: Generated<number>
  spent_at: string | null
}

export interface SigningKeysTable {
  kid: string
  seq: number
  alg: string
  public_jwk: string
  /** the private half, PKCS#8 DER sealed with DATA_ENCRYPTION_KEYS */
  private_key: string
  created_at: string
  activates_at: string
  /** when it is gone: its last token has expired and caches of the key set have let it go */
  retires_at: string | null
  revoked_at: string | null
}

export interface TotpFactorsTable {
  user_id: string
  /** the base32 secret sealed with DATA_ENCRYPTION_KEYS, bound to the user id */
  secret: string
  state: string
  /** the newest RFC 6238 time step accepted; a code is accepted only by raising it */
  last_step: number | string | null
  created_at: string
  activated_at: string | null
}

export interface RecoveryCodesTable {
  id: string
  user_id: string
  code_hash: string
  created_at: string
  used_at: string | null
}

export interface MfaChallengesTable {
  id: string
  token_hash: string
  user_id: string
  remember: number
  amr: string
  created_at: string
  expires_at: string
  attempts: Generated<number>
  spent_at: string | null
}

export interface Database {
  passkeys: PasskeysTable
  webauthn_user_handles: WebauthnUserHandlesTable
  webauthn_challenges: WebauthnChallengesTable
  api_keys: ApiKeysTable
  user_identities: UserIdentitiesTable
  oauth_clients: OauthClientsTable
  oauth_grants: OauthGrantsTable
  totp_factors: TotpFactorsTable
  recovery_codes: RecoveryCodesTable
  mfa_challenges: MfaChallengesTable
  signing_keys: SigningKeysTable
  users: UsersTable
  sessions: SessionsTable
  revocations: RevocationsTable
  audit_events: AuditEventsTable
  mail_outbox: MailOutboxTable
  one_time_secrets: OneTimeSecretsTable
  oauth_interactions: OauthInteractionsTable
  oauth_codes: OauthCodesTable
}

export type UserRow = Selectable<UsersTable>
export type SessionRow = Selectable<SessionsTable>
export type RevocationRow = Selectable<RevocationsTable>
export type AuditEventRow = Selectable<AuditEventsTable>
export type SigningKeyRow = Selectable<SigningKeysTable>
export type MailOutboxRow = Selectable<MailOutboxTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
