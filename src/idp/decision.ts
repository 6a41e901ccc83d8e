import type { IdpProvider } from '../config/idp.js'
import type { StoredIdentity } from '../db/identities.js'
import type { User } from '../db/users.js'
import { domainAllowed, type UpstreamIdentity } from './identity.js'
import type { IdpState } from './state-cookie.js'

export type Refusal = 'domain_not_allowed' | 'identity_in_use' | 'link_refused' | 'signup_disabled'

/** What a checked callback leads to (docs/identity-providers.md#how-a-sign-in-through-a-provider-goes), before anything is written. */
export type Decision =
  | { kind: 'sign_in', identity: StoredIdentity }
  | { kind: 'link', userId: string }
  | { kind: 'already_linked' }
  | { kind: 'auto_link', user: User }
  | { kind: 'pending_link', user: User }
  | { kind: 'sign_up', email: string }
  | { kind: 'refused', refusal: Refusal, user: User | undefined }

export interface Situation {
  provider: IdpProvider
  identity: UpstreamIdentity
  flow: IdpState
  /** the user (provider, subject) is linked to */
  linked: StoredIdentity | undefined
  /** the user whose email is the upstream email (looked up only when none is linked) */
  local: User | undefined
}

const refused = (refusal: Refusal, user?: User): Decision => ({ kind: 'refused', refusal, user })

/**
 * The decision table, row by row. allowed_domains holds at every sign-in, a linked one included.
 * An email match links only a verified upstream email, and never into an account whose own email
 * is unverified without that account's sign-in (auto_verified's conditions); a service account,
 * which never signs in, is never matched.
 */
export function decide ({ provider, identity, flow, linked, local }: Situation): Decision {
  if (!domainAllowed(provider, identity)) return refused('domain_not_allowed', local)
  if (flow.intent === 'link') {
    if (linked === undefined) return { kind: 'link', userId: flow.userId as string }
    return linked.userId === flow.userId ? { kind: 'already_linked' } : refused('identity_in_use')
  }
  if (linked !== undefined) return { kind: 'sign_in', identity: linked }
  if (local !== undefined) {
    if (!identity.emailVerified) return refused('link_refused', local)
    if (provider.linkPolicy === 'never' || local.kind === 'service') return refused('link_refused', local)
    const autoLinks = provider.linkPolicy === 'auto_verified' && provider.allowedDomains.length > 0 && local.emailVerified
    return autoLinks ? { kind: 'auto_link', user: local } : { kind: 'pending_link', user: local }
  }
  if (provider.allowSignup && identity.emailVerified && identity.email !== undefined) return { kind: 'sign_up', email: identity.email }
  return refused('signup_disabled')
}
