import type { TokenResponse } from '../schemas/auth.js'
import type { UserResponse } from '../schemas/users.js'
import type { User } from '../src/db/users.js'
import type { TokenPair } from '../src/sessions.js'

/*
 * How the routes shape domain objects into HTTP responses: the API's snake_case bodies. An
 * HTTP concern, so it sits with the routes and not in the framework-free src/. Not a route
 * module: src/app.ts registers routes by name.
 */

/** The API's shapes of the domain objects; the response schemas then filter them. */
export function toUserResponse (user: User): UserResponse {
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
    user: toUserResponse(pair.user)
  }
}
