import type { Generated, Selectable } from 'kysely'

/*
 * Column types are the portable subset of SQLite and PostgreSQL: ids are UUID text, times are
 * ISO 8601 UTC text with milliseconds (they sort as text and reach the API unconverted),
 * roles are a JSON array in text and booleans are 0/1 integers (better-sqlite3 binds no booleans).
 */
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
  /** 1 once the user proved the address with a `verify_email` code */
  email_verified: Generated<number>
  created_at: string
  updated_at: string
}

export interface SessionsTable {
  id: string
  user_id: string
  /** jti of the one refresh token that may rotate this session now */
  refresh_jti: string
  /** payload of that refresh token: re-signing it reproduces the token for the grace answer */
  refresh_claims: string
  /** the jti spent by the last rotation, honoured until rotated_at + REFRESH_REUSE_INTERVAL */
  previous_jti: string | null
  rotated_at: string | null
  created_at: string
  /** the sign-in that started the session: SESSION_MAX_AGE counts from it */
  signed_in_at: string
  expires_at: string
  /** the latest `exp` of an access token issued for the session (a revocation lasts until then) */
  access_expires_at: string
  revoked_at: string | null
  /** the client address at sign-in or the last refresh (as the rate limiter sees it) */
  ip: string | null
  /** the User-Agent then, cut to a bound */
  user_agent: string | null
  /** the sign-in or the last refresh: never written per request */
  last_used_at: string
}

export interface RevocationsTable {
  /** the database's sequence: instances learn new revocations by it, never by their own clocks */
  id: Generated<number>
  session_id: string
  user_id: string
  reason: string
  revoked_at: string
  /** after this no access token of the session can be valid, so the entry may go */
  expires_at: string
}

export interface AuditEventsTable {
  /** UUIDv7, monotonic within a process: ties of `at` still sort in the order they happened */
  id: string
  at: string
  event: string
  /** `success` or `failure` */
  outcome: string
  /** the user who acted, when a signed-in user did */
  actor_id: string | null
  /** the user the event is about; no foreign key: the trail of a deleted user stays */
  user_id: string | null
  session_id: string | null
  /** the email a failed sign-in was attempted with (it may name no user) */
  email: string | null
  /** the client address */
  address: string | null
  detail: string | null
}

/** Mail waiting for (or done with) delivery; times are ISO 8601 UTC text like every other table's. */
export interface MailOutboxTable {
  id: string
  recipient: string
  /** subject, text and html are null once the row is delivered or abandoned */
  subject: string | null
  text: string | null
  html: string | null
  created_at: string
  /** when a sender may claim the row next; a claim moves it to the end of the claim's lease */
  due_at: string
  /** deliveries started (counted at the claim, so a crash during one counts too) */
  attempts: number
  /** the claim's token: only the sender holding it may settle the row */
  claim_token: string | null
  sent_at: string | null
  abandoned_at: string | null
  /** why the latest attempt failed, or why the row was abandoned */
  last_error: string | null
}

/** Reset tokens and email codes, each stored only as a keyed hash (src/crypto/one-time-secrets.ts). */
export interface OneTimeSecretsTable {
  id: string
  user_id: string
  /** `reset`, `login` or `verify_email` */
  purpose: string
  /** HMAC-SHA256 of the secret, base64url */
  secret_hash: string
  /** the user's credentials_version at issue: a later password change voids the secret */
  credentials_version: number
  created_at: string
  expires_at: string
  /** wrong codes tried against it (email codes) */
  attempts: Generated<number>
  spent_at: string | null
}

export interface SigningKeysTable {
  kid: string
  seq: number
  alg: string
  /** the public half as a JWK (JSON) */
  public_jwk: string
  /** the private half, PKCS#8 DER sealed with DATA_ENCRYPTION_KEYS */
  private_key: string
  created_at: string
  /** when it starts signing */
  activates_at: string
  /** when it is gone: its last token has expired and caches of the key set have let it go */
  retires_at: string | null
  revoked_at: string | null
}

/** A user's TOTP factor (src/db/totp.ts): the secret sealed, never in the clear. */
export interface TotpFactorsTable {
  user_id: string
  /** the base32 secret sealed with DATA_ENCRYPTION_KEYS, bound to the user id */
  secret: string
  /** `pending` until a first code confirms it, then `active` */
  state: string
  /** the newest RFC 6238 time step accepted; a code is accepted only by raising it */
  last_step: number | string | null
  created_at: string
  activated_at: string | null
}

export interface RecoveryCodesTable {
  id: string
  user_id: string
  /** HMAC-SHA256 of the code, base64url */
  code_hash: string
  created_at: string
  used_at: string | null
}

export interface MfaChallengesTable {
  id: string
  /** HMAC-SHA256 of the mfa_token, base64url */
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
