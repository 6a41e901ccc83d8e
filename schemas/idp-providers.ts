import { Type, type Static } from '@sinclair/typebox'
import { Role } from './common.js'

/*
 * One entry of IDP_PROVIDERS_FILE (docs/identity-providers.md): an external identity provider
 * users may sign in through. Its secret only by reference, never in the file; the rules the
 * schema cannot say (an issuer for oidc only, https, the secret's file mode) are in src/config/idp.ts.
 */

export const PROVIDER_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$'
export const LINK_POLICIES = ['never', 'after_login', 'auto_verified'] as const

const Url = Type.String({ minLength: 1, maxLength: 2048 })
/** an OAuth scope token (RFC 6749 §3.3: printable ASCII but space, `"` and `\`) */
const Scope = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$' })
const DomainName = Type.String({ minLength: 1, maxLength: 253 })

export const ProviderEntry = Type.Object({
  id: Type.String({ pattern: PROVIDER_ID_PATTERN, maxLength: 32 }),
  type: Type.Union([Type.Literal('oidc'), Type.Literal('github')]),
  display_name: Type.String({ minLength: 1, maxLength: 60, pattern: '\\S' }),
  client_id: Type.String({ minLength: 1, maxLength: 255 }),
  client_secret_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$', maxLength: 128 })),
  client_secret_file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  /** an array of scope tokens, or one space-separated string as OAuth writes them */
  scopes: Type.Optional(Type.Union([
    Type.Array(Scope, { minItems: 1, maxItems: 32, uniqueItems: true }),
    Type.String({ minLength: 1, maxLength: 1024 })
  ])),
  issuer: Type.Optional(Url),
  github_url: Type.Optional(Url),
  github_api_url: Type.Optional(Url),
  allowed_domains: Type.Optional(Type.Array(DomainName, { maxItems: 100, uniqueItems: true })),
  allow_signup: Type.Optional(Type.Boolean()),
  link_policy: Type.Optional(Type.Union(LINK_POLICIES.map((p) => Type.Literal(p)))),
  role_mapping: Type.Optional(Type.Object({
    claim: Type.String({ minLength: 1, maxLength: 128 }),
    values: Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.Array(Role, { maxItems: 32, uniqueItems: true }), { maxProperties: 256 })
  }, { additionalProperties: false })),
  satisfies_mfa: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type ProviderEntry = Static<typeof ProviderEntry>

/* The browser's routes through a provider (routes/auth/idp.ts), none of them in /openapi.json. */

export const IdpParams = Type.Object({ provider: Type.String({ maxLength: 64 }) })
export type IdpParams = Static<typeof IdpParams>

/** `rd` is any string: a value the return-URL rule does not take is replaced by the default, never refused. */
export const IdpStartQuery = Type.Object({
  rd: Type.Optional(Type.String()),
  intent: Type.Optional(Type.Union([Type.Literal('login'), Type.Literal('link')]))
})
export type IdpStartQuery = Static<typeof IdpStartQuery>
