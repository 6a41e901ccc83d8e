import type { UserService } from '../accounts/users.js'
import type { Config } from '../config/config.js'
import { Envelope } from '../crypto/envelope.js'
import type { Store } from '../db/store.js'
import type { AuditSink } from '../events.js'
import type { CoreLogger } from '../logging/logger.js'
import type { SessionService } from '../sessions/session-service.js'
import type { TwoFactorService } from '../two-factor/two-factor-service.js'
import { IdpAccounts } from './idp-accounts.js'
import { IdpFlow } from './idp-flow.js'
import { IdpStateCookie } from './state-cookie.js'
import { Upstreams } from './upstreams.js'

/** Sign-in through external identity providers (services.idp); undefined while ENABLE_IDP_LOGIN is off. */
export interface IdpServices {
  upstreams: Upstreams
  flow: IdpFlow
  accounts: IdpAccounts
  /** the sealed `__Host-gh_idp` cookie */
  stateCookie: IdpStateCookie
}

export interface IdpOptions {
  config: Config
  store: Store
  users: UserService
  sessions: SessionService
  twoFactor: TwoFactorService | undefined
  audit: AuditSink
  log: CoreLogger
  /** ms between discovery attempts of a provider whose discovery failed (a minute; tests shorten it) */
  retryInterval?: number | undefined
}

export function createIdp ({ config, store, users, sessions, twoFactor, audit, log, retryInterval }: IdpOptions): IdpServices | undefined {
  // src/config/idp.ts requires the portal (PUBLIC_URL), which requires the data keys in production and generates them otherwise
  if (config.idp === undefined || config.portal === undefined || config.dataEncryptionKeys === undefined) return undefined
  const upstreams = new Upstreams({ providers: config.idp.providers, publicUrl: config.portal.publicUrl, log, retryInterval })
  const accounts = new IdpAccounts({ store, users, sessions, twoFactor, audit, defaultRoles: config.defaultRoles })
  return {
    upstreams,
    accounts,
    flow: new IdpFlow({ upstreams, accounts, store, audit }),
    stateCookie: new IdpStateCookie(new Envelope(config.dataEncryptionKeys))
  }
}
