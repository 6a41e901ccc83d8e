import type { CreateClientRequest, UpdateClientRequest } from '../../schemas/oidc-clients.js'

/*
 * The rules of an OpenID Connect client the schema cannot say, and its defaults (SPEC §15,
 * docs/oidc.md#clients). Framework-free and here, before src/oidc/, because the clients file is
 * read with the settings: the API, the CLI and the file hold a client to the same rules.
 */

export type ClientType = 'public' | 'confidential'
export type AuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post'

/** A client as gatehouse holds it, wherever it came from (the database or OIDC_CLIENTS_FILE). */
export interface OidcClient {
  clientId: string
  name: string
  type: ClientType
  tokenEndpointAuthMethod: AuthMethod
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  webOrigins: string[]
  scopes: string[]
  allowedRoles: string[]
  requireAal2: boolean
  skipConsent: boolean
  grantTypes: string[]
  roles: string[]
  /** seconds; undefined: ACCESS_TOKEN_TTL */
  accessTokenTtl: number | undefined
  disabled: boolean
  /** from OIDC_CLIENTS_FILE: the API and the CLI refuse to change it (409 client_read_only) */
  readOnly: boolean
}

export type ClientFields = Omit<OidcClient, 'readOnly'>

/** field → messages, as the 422 body lists them */
export type RuleFailures = Record<string, string[]>

export const DEFAULT_SCOPES = ['openid', 'profile', 'email']

/** RFC 8252 §7.3: loopback literals; `localhost` by SPEC §15 too. */
function isLoopback (hostname: string): boolean {
  return hostname === 'localhost' || /^127(\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]'
}

/** Why a redirect URI is refused, or undefined: absolute, no fragment, https, or http on a loopback address or localhost. */
export function redirectUriProblem (value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute URL'
  }
  if (value.includes('#')) return 'must not have a fragment'
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined
  return 'must be https (http only on a loopback address or localhost)'
}

function originProblem (value: string): string | undefined {
  const problem = redirectUriProblem(value)
  if (problem !== undefined) return problem
  return new URL(value).origin === value ? undefined : 'must be an origin (scheme, host and port, no path)'
}

function checkList (failures: RuleFailures, field: string, values: string[] | undefined, check: (v: string) => string | undefined): void {
  for (const value of values ?? []) {
    const problem = check(value)
    if (problem !== undefined) (failures[field] ??= []).push(`The ${field} field ${problem}: ${value.slice(0, 100)}`)
  }
}

/** A client's fields once defaults are filled: a new client's from its request, a changed one's from the stored client and the change. */
export function clientFields (input: CreateClientRequest & { client_id: string }): ClientFields {
  const type = input.type
  return {
    clientId: input.client_id,
    name: input.name.trim(),
    type,
    tokenEndpointAuthMethod: input.token_endpoint_auth_method ?? (type === 'public' ? 'none' : 'client_secret_basic'),
    redirectUris: input.redirect_uris,
    postLogoutRedirectUris: input.post_logout_redirect_uris ?? [],
    webOrigins: input.web_origins ?? [],
    scopes: input.scopes ?? DEFAULT_SCOPES,
    allowedRoles: input.allowed_roles ?? [],
    requireAal2: input.require_aal2 ?? false,
    skipConsent: input.skip_consent ?? false,
    grantTypes: input.grant_types ?? ['authorization_code'],
    roles: input.roles ?? [],
    accessTokenTtl: input.access_token_ttl,
    disabled: input.disabled ?? false
  }
}

/** The stored client with a change applied (PATCH): the same rules then hold for the result. */
export function changedFields (client: ClientFields, change: UpdateClientRequest): ClientFields {
  return {
    ...client,
    ...(change.name !== undefined && { name: change.name.trim() }),
    ...(change.token_endpoint_auth_method !== undefined && { tokenEndpointAuthMethod: change.token_endpoint_auth_method }),
    ...(change.redirect_uris !== undefined && { redirectUris: change.redirect_uris }),
    ...(change.post_logout_redirect_uris !== undefined && { postLogoutRedirectUris: change.post_logout_redirect_uris }),
    ...(change.web_origins !== undefined && { webOrigins: change.web_origins }),
    ...(change.scopes !== undefined && { scopes: change.scopes }),
    ...(change.allowed_roles !== undefined && { allowedRoles: change.allowed_roles }),
    ...(change.require_aal2 !== undefined && { requireAal2: change.require_aal2 }),
    ...(change.skip_consent !== undefined && { skipConsent: change.skip_consent }),
    ...(change.grant_types !== undefined && { grantTypes: change.grant_types }),
    ...(change.roles !== undefined && { roles: change.roles }),
    ...(change.access_token_ttl !== undefined && { accessTokenTtl: change.access_token_ttl }),
    ...(change.disabled !== undefined && { disabled: change.disabled })
  }
}

/** Every rule a whole client breaks (empty: none). */
export function clientRuleFailures (client: ClientFields): RuleFailures {
  const failures: RuleFailures = {}
  checkList(failures, 'redirect_uris', client.redirectUris, redirectUriProblem)
  checkList(failures, 'post_logout_redirect_uris', client.postLogoutRedirectUris, redirectUriProblem)
  checkList(failures, 'web_origins', client.webOrigins, originProblem)
  const method = client.tokenEndpointAuthMethod
  if (client.type === 'public' && method !== 'none') {
    failures.token_endpoint_auth_method = ['The token_endpoint_auth_method field must be none for a public client']
  }
  if (client.type === 'confidential' && method === 'none') {
    failures.token_endpoint_auth_method = ['The token_endpoint_auth_method field must be client_secret_basic or client_secret_post for a confidential client']
  }
  if (client.type === 'public' && client.grantTypes.includes('client_credentials')) {
    failures.grant_types = ['The grant_types field may include client_credentials only for a confidential client']
  }
  if (client.name === '') failures.name = ['The name field is required']
  return failures
}
