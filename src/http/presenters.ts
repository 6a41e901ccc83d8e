import type { TokenResponse } from '../../schemas/auth.js'
import type { SigningKey } from '../../schemas/keys.js'
import type { SessionResponse } from '../../schemas/sessions.js'
import type { UserResponse } from '../../schemas/users.js'
import type { MfaChallenge } from '../../schemas/two-factor.js'
import { catalogueEntry } from '../errors.js'
import type { User } from '../db/users.js'
import type { KeyEntry } from '../keys/key-service.js'
import type { SessionView, TokenPair } from '../sessions/session-service.js'
import type { SecondFactorChallenge } from '../two-factor/two-factor-service.js'

/*
 * The public JSON shapes of the domain objects (snake_case, as the API documents them), in one
 * place: the routes answer with them and the command line's --json prints the same ones.
 */

export function userRepresentation (user: User): UserResponse {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    age: user.age,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    roles: user.roles,
    is_superuser: user.isSuperuser,
    email_verified: user.emailVerified
  }
}

/**
 * Never a token; `current` marks the caller's own session (always false when listed for someone
 * else). With the OpenID Connect provider on, `clientNames` adds client_id and client_name (null
 * on a portal or API session).
 */
export function sessionRepresentation (session: SessionView, currentId?: string, clientNames?: Map<string, string>): SessionResponse {
  const client = clientNames === undefined
    ? {}
    : { client_id: session.clientId, client_name: session.clientId === null ? null : clientNames.get(session.clientId) ?? null }
  return {
    ...client,
    id: session.id,
    current: session.id === currentId,
    created_at: session.createdAt,
    last_used_at: session.lastUsedAt,
    expires_at: session.expiresAt,
    ip: session.ip,
    user_agent: session.userAgent,
    aal: session.aal,
    amr: session.amr
  }
}

export function signingKeyRepresentation (entry: KeyEntry): SigningKey {
  return { kid: entry.kid, alg: entry.alg, state: entry.state, created_at: entry.createdAt, activates_at: entry.activatesAt, retires_at: entry.retiresAt }
}

/**
 * `expires_in` is the access token's lifetime, `exp − iat` (RFC 6749 §5.1), so a fresh pair always
 * says the configured TTL: counting down from the moment of answering said 899 whenever a second
 * boundary passed between signing (on a whole-second `iat`) and answering.
 */
export function toTokenResponse (pair: TokenPair): TokenResponse {
  return {
    access_token: pair.accessToken,
    refresh_token: pair.refreshToken,
    token_type: 'Bearer',
    expires_in: pair.accessLifetime,
    expires_at: new Date(pair.accessExpiresAt).toISOString(),
    refresh_expires_at: new Date(pair.refreshExpiresAt).toISOString(),
    user: userRepresentation(pair.user)
  }
}

/** The status a challenge is answered with: a 403, whose body keeps the ErrorResponse fields. */
export const MFA_CHALLENGE_STATUS = 403

/** A sign-in's second-factor challenge as the 403 mfa_required body (schemas/two-factor.ts MfaChallenge). */
export function toMfaChallenge (challenge: SecondFactorChallenge): MfaChallenge {
  return {
    error: 'Forbidden',
    message: catalogueEntry('mfa_required').message,
    code: 'mfa_required',
    reason: 'mfa_required',
    mfa_token: challenge.mfaToken,
    methods: [...challenge.methods],
    expires_in: challenge.expiresIn
  }
}
