// the tables of the opt-in features (passkeys, API keys, the OpenID Connect provider, external identities), in the same
// portable subset as src/db/schema.ts, whose Database lists them

export interface PasskeysTable {
  /** the credential ID, base64url */
  id: string
  user_id: string
  name: string
  /** the COSE public key, base64url */
  public_key: string
  sign_count: number | string
  /** BE at registration: it may never change */
  backup_eligible: number
  /** BS at the last use */
  backed_up: number
  transports: string
  aaguid: string
  created_at: string
  last_used_at: string | null
}

/** One WebAuthn user handle per user: 32 random bytes, never the user id. */
export interface WebauthnUserHandlesTable {
  user_id: string
  handle: string
}

export interface WebauthnChallengesTable {
  id: string
  /** `k:<key id>:<HMAC>` of the challenge under a key derived from DATA_ENCRYPTION_KEYS */
  challenge_hash: string
  purpose: string
  /** the user the ceremony is for; null for a discoverable sign-in */
  user_id: string | null
  created_at: string
  expires_at: string
  spent_at: string | null
}

/** An API key: only its id and a keyed hash of the whole key are kept (src/api-keys/). */
export interface ApiKeysTable {
  id: string
  user_id: string
  name: string
  roles: string
  /** HMAC-SHA-256 of the key under the data key `hash_key_id`, base64url */
  secret_hash: string
  hash_key_id: string
  created_at: string
  expires_at: string
  /** written at most once a minute per key, never on the request path */
  last_used_at: string | null
  revoked_at: string | null
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

/** An upstream identity linked to a user (SPEC §16): no upstream token is ever kept. */
export interface UserIdentitiesTable {
  id: string
  user_id: string
  /** the provider's `id` in IDP_PROVIDERS_FILE */
  provider: string
  /** the provider's `sub` (oidc) or numeric user id (github) */
  subject: string
  /** the upstream email at the last sign-in through it (verified or not); null when it sent none */
  email: string | null
  created_at: string
  last_login_at: string | null
}
