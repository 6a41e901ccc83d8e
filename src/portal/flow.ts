import type { Envelope } from '../crypto/envelope.js'

/**
 * A link to an identity provider waiting for the local sign-in that proves the account is the
 * browser's (docs/identity-providers.md): the upstream identity, and the local user whose email it
 * matched. It lives until `expiresAt` (unix seconds) whichever step carries it.
 */
export interface PendingLink { provider: string, subject: string, email: string, userId: string, expiresAt: number }

/**
 * The step a browser is in the middle of, kept in the sealed `__Host-gh_flow` cookie: the server
 * keeps no row for it, and the browser can neither read nor forge it (AES-256-GCM under
 * DATA_ENCRYPTION_KEYS, bound to the cookie's name). `webauthn`: the second step may be a passkey.
 * A pending link rides along the second step, so a sign-in that needs one still completes it.
 */
export type FlowStep =
  | { step: 'second_factor', mfaToken: string, rd: string, webauthn?: boolean, link?: PendingLink }
  | { step: 'email_code', email: string, rd: string }
  | { step: 'pending_link', link: PendingLink, rd: string }

/** The longest a step lives; a second factor's is the mfa_token's own five minutes. */
export const FLOW_MAX_AGE = 600
export const SECOND_FACTOR_FLOW_AGE = 300

interface Sealed<T> { exp: number, value: T }

/**
 * A value a browser carries but can neither read nor forge: sealed under DATA_ENCRYPTION_KEYS with
 * the cookie's name as additional data (so one cookie's value does not open as another's), with
 * its own expiry inside.
 */
export class SealedCookie<T> {
  constructor (private readonly envelope: Envelope, private readonly name: string, private readonly clock: () => number = Date.now) {}

  seal (value: T, maxAge: number): string {
    const sealed: Sealed<T> = { exp: Math.floor(this.clock() / 1000) + maxAge, value }
    return this.envelope.seal(JSON.stringify(sealed), this.name)
  }

  /** The value, or undefined when the cookie is absent, forged, sealed by a retired key or past its time. */
  open (cookie: string | undefined): T | undefined {
    if (cookie === undefined || cookie.length > 4096) return undefined
    try {
      const sealed = JSON.parse(this.envelope.open(cookie, this.name).toString('utf8')) as Sealed<T>
      return sealed.exp > this.clock() / 1000 ? sealed.value : undefined
    } catch {
      return undefined
    }
  }
}

export class FlowCookie extends SealedCookie<FlowStep> {
  constructor (envelope: Envelope, clock: () => number = Date.now) {
    super(envelope, '__Host-gh_flow', clock)
  }
}
