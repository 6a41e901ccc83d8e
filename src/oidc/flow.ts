import type { Config } from '../config/config.js'
import type { Store } from '../db/store.js'
import type { AuditSink } from '../events.js'
import type { KeyRing } from '../keys/key-ring.js'
import type { RevocationIndex } from '../revocations/revocation-index.js'
import type { SessionService } from '../sessions/session-service.js'
import type { TokenIssuer } from '../tokens/issuer.js'
import { Authorizer } from './authorizer.js'
import { ChildSessions } from './child-sessions.js'
import type { OidcClients } from './clients.js'
import { AuthorizationCodes } from './codes.js'
import { FlowSecrets } from './flow-secrets.js'
import type { OidcGrants } from './grants.js'
import { OidcTokens } from './oidc-tokens.js'
import { TokenLookup } from './token-lookup.js'

export interface OidcFlow {
  authorizer: Authorizer
  codes: AuthorizationCodes
  children: ChildSessions
  tokens: OidcTokens
  /** revocation and introspection of any token gatehouse issued */
  lookup: TokenLookup
  /** to refuse the access tokens of ended child sessions, from memory */
  revocations: RevocationIndex
}

export interface FlowOptions {
  config: Config
  store: Store
  audit: AuditSink
  core: { ring: KeyRing, tokens: TokenIssuer, sessions: SessionService, revocations: RevocationIndex }
  registry: { issuer: string, clients: OidcClients, grants: OidcGrants }
}

/**
 * The flow of the provider (docs/oidc.md#the-flow): authorization, codes, child sessions and
 * their tokens. A client disabled or deleted, or a grant revoked, ends the child sessions.
 */
export function createFlow ({ config, store, audit, core, registry }: FlowOptions): OidcFlow {
  const secrets = new FlowSecrets(config.dataEncryptionKeys ?? [])
  const tokens = new OidcTokens(core.ring, registry.issuer, config.jwtAudience)
  const children = new ChildSessions({
    store,
    tokens: core.tokens,
    oidcTokens: tokens,
    sessions: core.sessions,
    settings: { sessionMaxAge: config.sessionMaxAge, refreshReuseInterval: config.refreshReuseInterval, accessTtl: config.accessTtl },
    audit
  })
  const codes = new AuthorizationCodes({ store, secrets, children, audit })
  const authorizer = new Authorizer({ store, secrets, codes, grants: registry.grants, clients: registry.clients, issuer: registry.issuer })
  const system = { ip: 'system' }
  registry.clients.onChange(async (clientId, change) => { await children.endFor({ clientId }, `client_${change}`, system) })
  registry.grants.onRevoke(async (userId, clientId, context) => { await children.endFor({ clientId, userId }, 'grant_revoked', context) })
  const flow = { authorizer, codes, children, tokens, revocations: core.revocations }
  const lookup = new TokenLookup({ flow, tokens: core.tokens, sessions: core.sessions, store, clients: registry.clients })
  return { ...flow, lookup }
}
