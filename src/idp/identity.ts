import { normalizeEmail } from '../accounts/users.js'
import type { IdpProvider } from '../config/idp.js'
import type { IdpState } from './state-cookie.js'

/**
 * Who the provider says signed in, after every check of the callback: the subject, the email only
 * with whether the provider vouches for it, and the claims role mapping reads (oidc: the ID
 * token's and userinfo's; github: the fields of /user). Upstream tokens are never kept.
 */
export interface UpstreamIdentity {
  subject: string
  /** lower case; undefined when the provider gave none */
  email: string | undefined
  /** oidc: `email_verified === true`; github: the primary address, verified */
  emailVerified: boolean
  name: string | undefined
  claims: Readonly<Record<string, unknown>>
  /** the provider's `amr`, when it sent one */
  amr: string[]
}

/** What the browser is sent to the provider with (the verifier's S256 challenge, never the verifier). */
export interface AuthorizationParams { state: string, codeChallenge: string, nonce: string | undefined }

/** One provider, ready: where a sign-in starts, and the checks and exchange of its callback. */
export interface Upstream {
  authorizationUrl (params: AuthorizationParams): string
  /** `callback`: the callback's URL as the provider sent the browser to it (PUBLIC_URL's, with the query as received) */
  complete (callback: URL, flow: IdpState): Promise<UpstreamIdentity>
}

const EMAIL = /^[^@\s]{1,64}@[^@\s]{1,253}$/

/** An upstream address as gatehouse keeps emails (trimmed, lower case), or undefined when it is not one. */
export function emailOf (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const email = normalizeEmail(value)
  return email.length <= 254 && EMAIL.test(email) ? email : undefined
}

/** The domain of a verified email, when `allowed_domains` lists it; an empty list allows any (and no email at all). */
export function domainAllowed (provider: IdpProvider, identity: UpstreamIdentity): boolean {
  if (provider.allowedDomains.length === 0) return true
  const domain = identity.email?.slice(identity.email.lastIndexOf('@') + 1)
  // an unverified address proves nothing about the domain
  return identity.emailVerified && domain !== undefined && provider.allowedDomains.includes(domain)
}

/** A provider that is trusted to ask for a second factor (`satisfies_mfa`) and says it did. */
export function upstreamMfa (provider: IdpProvider, identity: UpstreamIdentity): boolean {
  return provider.satisfiesMfa && identity.amr.includes('mfa')
}

/**
 * The user's roles after a sign-in through the provider: every role the mapping can grant is
 * dropped, then those the claim's values map to now are added; roles it cannot grant are kept.
 * The claim may hold one value or a list (`groups`); values that are not strings count for nothing.
 */
export function mappedRoles (provider: IdpProvider, identity: UpstreamIdentity, roles: readonly string[]): string[] {
  const mapping = provider.roleMapping
  if (mapping === undefined) return [...roles]
  const mappable = new Set(Object.values(mapping.values).flat())
  const claim = identity.claims[mapping.claim]
  const values = (Array.isArray(claim) ? claim : [claim]).filter((v): v is string => typeof v === 'string')
  const granted = values.flatMap((value) => Object.hasOwn(mapping.values, value) ? mapping.values[value] ?? [] : [])
  return [...new Set([...roles.filter((role) => !mappable.has(role)), ...granted])]
}

/** The name a new account gets: the provider's, else the email's local part (bounded as every name is). */
export function nameOf (identity: UpstreamIdentity & { email: string }): string {
  const name = identity.name?.trim() ?? ''
  return (name.length >= 2 ? name : identity.email.slice(0, identity.email.lastIndexOf('@'))).slice(0, 100)
}
