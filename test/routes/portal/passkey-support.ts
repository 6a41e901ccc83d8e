import type { FastifyInstance } from 'fastify'
import { login } from '../../helper.js'
import { SoftAuthenticator, type Twist } from '../../webauthn-authenticator.js'
import { ceremony, registerWith } from '../passkeys/support.js'
import { type PageClient, PORTAL_ORIGIN } from './support.js'

/*
 * A passkey sign-in on the portal's page over inject (passkey-sign-in.test.ts, the OpenID
 * provider's step-up): the software authenticator of the passkey suites stands in for the browser.
 */

/** Passkeys on behind PORTAL_ORIGIN: its registrable domain is the RP ID. */
export const PORTAL_PASSKEYS = { ENABLE_PASSKEYS: true, WEBAUTHN_RP_ID: 'gh.localhost' }

/** A passkey for `user`, registered through the JSON routes with a fresh sign-in's token. */
export async function withPasskey (app: FastifyInstance, user: { email: string, password: string }, accessToken?: string): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator(PORTAL_ORIGIN)
  const token = accessToken ?? (await login(app, user)).access_token
  const res = await registerWith(app, token, authenticator)
  if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.body}`)
  return authenticator
}

/** The sign-in page's form: options from the JSON route (as passkeys.js asks them), the assertion (made with `twist`) posted. */
export async function postAssertion (browser: PageClient, app: FastifyInstance, authenticator: SoftAuthenticator, rd?: string, twist: Twist = {}): ReturnType<PageClient['post']> {
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  return await browser.post('/portal/passkey', { challenge_id: challengeId, credential: JSON.stringify(authenticator.get(options, twist)), ...(rd === undefined ? {} : { rd }) })
}
