import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { PasskeyForm } from '../../schemas/portal.js'
import { PasskeyInvalid } from '../../src/errors.js'
import type { PasskeyService } from '../../src/passkeys/passkey-service.js'

/** The `credential` field: the JSON text of the browser's PublicKeyCredential; text that is not JSON fails as a wrong passkey does. */
export function postedCredential (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new PasskeyInvalid()
  }
}

/**
 * POST /portal/passkey (only with ENABLE_PASSKEYS): the sign-in page's passkey, its assertion
 * posted as a form by passkeys.js. The same service call, limit and answers as POST
 * /auth/passkeys/login/verify: signed in → 303 to the return URL; a second factor still due → the
 * flow cookie and 303 /portal/2fa; any failure → the sign-in page again, 400 passkey_invalid.
 */
const passkeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService, page: (request: FastifyRequest) => PageView }> = async (fastify, { passkeys, page }) => {
  const { portalSession } = fastify

  fastify.post('/passkey', { schema: { body: PasskeyForm }, config: { rateLimit: fastify.rateLimits.login, portalForm: page } }, async (request, reply) => {
    const { rd, challenge_id: challengeId, credential } = request.body
    const target = portalSession.returnUrl(request, rd)
    const outcome = await passkeys.login({ challengeId, credential: postedCredential(credential), remember: false }, portalSession.context(request))
    if (outcome.status === 'second_factor_required') return await portalSession.secondFactorDue(reply, outcome.challenge, target)
    return await portalSession.signedIn(request, reply, outcome.pair, target)
  })
}

export default passkeyRoutes
