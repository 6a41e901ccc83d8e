import type { Generated, Selectable } from 'kysely'

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

export interface OauthInteractionsTable {
  id_hash: string
  /** the data encryption key whose derived key made id_hash */
  key_id: string
  client_id: string
  /** the checked authorization request, JSON */
  request: string
  /** `login` (waiting for a sign-in newer than created_at) or `consent` (for session_id) */
  phase: string
  session_id: string | null
  created_at: string
  expires_at: string
  spent_at: string | null
}

export interface OauthCodesTable {
  code_hash: string
  key_id: string
  client_id: string
  user_id: string
  /** the portal session the code was issued in */
  session_id: string
  redirect_uri: string
  code_challenge: string
  nonce: string | null
  /** space-separated */
  scopes: string
  created_at: string
  expires_at: string
  spent_at: string | null
  child_session_id: string | null
  replayed_at: string | null
}

export interface OauthClientsTable {
  client_id: string
  name: string
  type: string
  token_endpoint_auth_method: string
  /** JSON arrays, as every list below */
  redirect_uris: string
  post_logout_redirect_uris: string
  web_origins: string
  scopes: string
  allowed_roles: string
  require_aal2: number
  skip_consent: number
  grant_types: string
  roles: string
  /** seconds; null: ACCESS_TOKEN_TTL */
  access_token_ttl: number | null
  disabled: number
  /** the keyed hash of the secret (confidential clients) and the id of the data key it was made under */
  secret_hash: string | null
  secret_key_id: string | null
  created_at: string
  updated_at: string
}

export interface OauthGrantsTable {
  user_id: string
  client_id: string
  /** JSON array: the scopes consented to, together */
  scopes: string
  granted_at: string
}

export interface Database {
  oauth_interactions: OauthInteractionsTable
  oauth_codes: OauthCodesTable
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
}

export type UserRow = Selectable<UsersTable>
export type SessionRow = Selectable<SessionsTable>
export type RevocationRow = Selectable<RevocationsTable>
export type AuditEventRow = Selectable<AuditEventsTable>
export type SigningKeyRow = Selectable<SigningKeysTable>
export type MailOutboxRow = Selectable<MailOutboxTable>
