import type { TokenResponse } from '../schemas/auth.js'
import { userRepresentation } from '../src/representations.js'
import type { TokenPair } from '../src/sessions.js'

/*
 * How the routes shape domain objects into HTTP responses: the API's snake_case bodies. An
 * HTTP concern, so it sits with the routes and not in the framework-free src/. Not a route
 * module: src/app.ts registers routes by name.
 */

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
