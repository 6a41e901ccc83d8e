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
    is_superuser: user.isSuperuser
  }
}

/**
 * `expires_in` rounds up: `exp` is a whole second no later than iat + TTL, so a fresh pair says
 * the configured TTL (900), never 899 because the clock moved past a half second meanwhile.
 */
export function toTokenResponse (pair: TokenPair): TokenResponse {
  return {
    access_token: pair.accessToken,
    refresh_token: pair.refreshToken,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.ceil((pair.accessExpiresAt - Date.now()) / 1000)),
    expires_at: new Date(pair.accessExpiresAt).toISOString(),
    refresh_expires_at: new Date(pair.refreshExpiresAt).toISOString(),
    user: toUserResponse(pair.user)
  }
}
