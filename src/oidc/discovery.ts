import type { JwtAlgorithm } from '../config/keys.js'
import { AUTH_METHODS, GRANT_TYPES, OIDC_SCOPES } from '../../schemas/oidc-clients.js'

/** The claims an ID token, an access token or userinfo may carry (SPEC §15.1). */
const CLAIMS = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'sid', 'email', 'email_verified', 'name', 'roles']

/**
 * The provider's metadata (OpenID Connect Discovery 1.0 §3, RFC 8414 §2): one document for both
 * well-known paths, built once at start. JWT_ALG is the one signing algorithm listed.
 */
export function discoveryDocument (issuer: string, alg: JwtAlgorithm): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    userinfo_endpoint: `${issuer}/oauth2/userinfo`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    end_session_endpoint: `${issuer}/oauth2/end-session`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [alg],
    scopes_supported: [...OIDC_SCOPES],
    claims_supported: CLAIMS,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'] satisfies Array<typeof AUTH_METHODS[number]>,
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true
  }
}
