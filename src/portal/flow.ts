import type { Envelope } from '../crypto/envelope.js'

/**
 * The step a browser is in the middle of, kept in the sealed `__Host-gh_flow` cookie: the server
 * keeps no row for it, and the browser can neither read nor forge it (AES-256-GCM under
 * DATA_ENCRYPTION_KEYS, bound to the cookie's name). `webauthn`: the second step may be a passkey.
 */
export type FlowStep =
  | { step: 'second_factor', mfaToken: string, rd: string, webauthn?: boolean }
  | { step: 'email_code', email: string, rd: string }

/** The longest a step lives; a second factor's is the mfa_token's own five minutes. */
export const FLOW_MAX_AGE = 600
export const SECOND_FACTOR_FLOW_AGE = 300

const CONTEXT = '__Host-gh_flow'

interface Sealed { exp: number, value: FlowStep }

export class FlowCookie {
  constructor (private readonly envelope: Envelope, private readonly clock: () => number = Date.now) {}

  seal (value: FlowStep, maxAge: number): string {
    const sealed: Sealed = { exp: Math.floor(this.clock() / 1000) + maxAge, value }
    return this.envelope.seal(JSON.stringify(sealed), CONTEXT)
  }

  /** The step, or undefined when the cookie is absent, forged, sealed by a retired key or past its time. */
  open (cookie: string | undefined): FlowStep | undefined {
    if (cookie === undefined || cookie.length > 4096) return undefined
    try {
      const sealed = JSON.parse(this.envelope.open(cookie, CONTEXT).toString('utf8')) as Sealed
      return sealed.exp > this.clock() / 1000 ? sealed.value : undefined
    } catch {
      return undefined
    }
  }
}
