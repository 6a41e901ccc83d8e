import type { Envelope } from '../crypto/envelope.js'
import { SealedCookie } from '../portal/flow.js'

export const IDP_COOKIE = '__Host-gh_idp'
/** seconds: the longest a sign-in may spend at the provider */
export const IDP_COOKIE_AGE = 600

/**
 * What the start of a sign-in through a provider leaves in the browser's sealed `__Host-gh_idp`
 * cookie, and the callback needs back: nothing of it is kept on the server, and the browser can
 * neither read nor change it. `userId`: the signed-in user a link is for.
 */
export interface IdpState {
  provider: string
  state: string
  verifier: string
  /** oidc only */
  nonce: string | undefined
  rd: string
  intent: 'login' | 'link'
  userId: string | undefined
}

export class IdpStateCookie extends SealedCookie<IdpState> {
  constructor (envelope: Envelope, clock?: () => number) {
    super(envelope, IDP_COOKIE, clock)
  }
}
