import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { TwoFactorForm, TwoFactorPasskeyForm, TwoFactorQuery } from '../../schemas/portal.js'
import { assetPath } from '../../src/portal/files.js'
import type { FlowStep } from '../../src/portal/flow.js'
import type { TwoFactorService } from '../../src/two-factor/two-factor-service.js'
import { postedCredential } from './passkey.js'

type SecondFactorStep = Extract<FlowStep, { step: 'second_factor' }>

/**
 * GET and POST /portal/2fa: the second step of a sign-in (docs/portal.md). The challenge's
 * mfa_token lives only in the sealed `__Host-gh_flow` cookie; the code or recovery code goes
 * to the service POST /auth/verify-2fa uses. Without JavaScript, a link (`?use=recovery`)
 * swaps the code field for a recovery-code field. With a passkey among the step's methods, the
 * page also carries that user's request options (passkeys.js posts the answer here).
 */
const twoFactorRoutes: FastifyPluginAsyncTypebox<{ twoFactor: TwoFactorService }> = async (fastify, { twoFactor }) => {
  const { config, portalSession } = fastify
  const { passkeys } = fastify.services
  const base = `${config.portal?.publicUrl ?? ''}/portal`
  const loginPage = `${base}/login`

  /** the page; `step`: the pending sign-in, whose passkeys it offers when its methods name them */
  const page = async (recovery: boolean, step?: SecondFactorStep): Promise<PageView> => {
    const view = { template: 'two-factor', heading: 'Two-factor sign-in', recovery }
    if (passkeys === undefined || step?.webauthn !== true) return view
    const { challenge_id: challengeId, options } = await passkeys.loginOptions(step.mfaToken)
    return { ...view, passkey: { challengeId, options }, scripts: [assetPath(base, 'passkeys.js')] }
  }
  const pending = (request: FastifyRequest): SecondFactorStep | undefined => {
    const step = portalSession.flow.read(request)
    return step?.step === 'second_factor' ? step : undefined
  }
  const postedPage = async (request: FastifyRequest): Promise<PageView> => {
    const step = pending(request)
    return {
      ...await page(typeof (request.body as Partial<TwoFactorPasskeyForm> | undefined)?.recovery_code === 'string', step),
      formTarget: step === undefined ? undefined : portalSession.returnUrl(request, step.rd)
    }
  }
  // a stale or forged flow cookie, or none: the sign-in starts again
  const startAgain = async (reply: FastifyReply): Promise<FastifyReply> => await reply.redirect(loginPage, 303)

  fastify.get('/2fa', { schema: { querystring: TwoFactorQuery } }, async (request, reply) => {
    const step = pending(request)
    if (step === undefined) return await startAgain(reply)
    return reply.page(await page(request.query.use === 'recovery', step), { formTarget: portalSession.returnUrl(request, step.rd) })
  })

  fastify.post('/2fa', {
    // without passkeys the form is exactly what it was: a credential field is a 422
    schema: { body: passkeys === undefined ? TwoFactorForm : TwoFactorPasskeyForm },
    config: { rateLimit: fastify.rateLimits.login, portalForm: postedPage }
  }, async (request, reply) => {
    const step = pending(request)
    if (step === undefined) return await startAgain(reply)
    const { code, recovery_code: recoveryCode, challenge_id: challengeId, credential } = request.body as TwoFactorPasskeyForm
    const context = portalSession.context(request)
    const { pair } = passkeys !== undefined && challengeId !== undefined && credential !== undefined
      ? await passkeys.secondFactor({ mfaToken: step.mfaToken, challengeId, credential: postedCredential(credential) }, context)
      : await twoFactor.completeChallenge(step.mfaToken, recoveryCode !== undefined ? { recoveryCode } : { code }, context)
    return await portalSession.signedIn(request, reply, pair, portalSession.returnUrl(request, step.rd))
  })
}

export default twoFactorRoutes
