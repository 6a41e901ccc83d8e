import type { OidcClientBody } from '../../schemas/oidc-clients.js'
import type { ClientView } from './clients.js'

/** A client as the API and the CLI show it (snake_case, never its secret); `defaultTtl`: ACCESS_TOKEN_TTL. */
export function clientBody (client: ClientView, defaultTtl: number): OidcClientBody {
  return {
    client_id: client.clientId,
    name: client.name,
    type: client.type,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    web_origins: client.webOrigins,
    scopes: client.scopes,
    allowed_roles: client.allowedRoles,
    require_aal2: client.requireAal2,
    skip_consent: client.skipConsent,
    grant_types: client.grantTypes,
    roles: client.roles,
    access_token_ttl: client.accessTokenTtl ?? defaultTtl,
    disabled: client.disabled,
    read_only: client.readOnly,
    created_at: client.createdAt,
    updated_at: client.updatedAt
  }
}
