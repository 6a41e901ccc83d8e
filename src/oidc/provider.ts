import type { Config } from '../config/config.js'
import type { Store } from '../db/store.js'
import type { AuditSink } from '../events.js'
import type { CounterStore } from '../limits/throttle.js'
import { ClientAdmin } from './client-admin.js'
import { ClientSecrets } from './client-secrets.js'
import { OidcClients } from './clients.js'
import { createFlow, type FlowOptions, type OidcFlow } from './flow.js'
import { OidcGrants } from './grants.js'

/** The OpenID Connect provider's services (services.oidc); undefined while ENABLE_OIDC_PROVIDER is off. */
export interface OidcServices {
  /** PUBLIC_URL exactly */
  issuer: string
  clients: OidcClients
  admin: ClientAdmin
  grants: OidcGrants
  /** /oauth2/*: authorization, codes, child sessions, tokens */
  flow: OidcFlow
}

export interface OidcOptions { config: Config, store: Store, counters: CounterStore, audit: AuditSink, clock?: () => number, core: FlowOptions['core'] | undefined }

export function createOidc ({ config, store, counters, audit, clock, core }: OidcOptions): OidcServices | undefined {
  // src/config/config.ts requires the data keys with the provider on (an asymmetric JWT_ALG needs them too)
  if (config.oidc === undefined || config.dataEncryptionKeys === undefined || core === undefined) return undefined
  const secrets = new ClientSecrets(config.dataEncryptionKeys)
  const throttle = {
    counters,
    max: config.loginRateLimit.max,
    windowMs: config.loginRateLimit.windowSeconds * 1000,
    ipv6Prefix: config.ipv6SubnetPrefix
  }
  const clients = new OidcClients({ store, fileClients: config.oidc.fileClients, secrets, throttle })
  const grants = new OidcGrants({ store, clients, audit, clock })
  const issuer = config.oidc.issuer
  return {
    issuer,
    clients,
    admin: new ClientAdmin({ store, clients, secrets, audit, clock }),
    grants,
    flow: createFlow({ config, store, audit, core, registry: { issuer, clients, grants } })
  }
}
