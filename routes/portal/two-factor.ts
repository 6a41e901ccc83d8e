import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { TwoFactorForm, TwoFactorQuery } from '../../schemas/portal.js'
import type { TwoFactorService } from '../../src/two-factor/two-factor-service.js'

/**
 * GET and POST /portal/2fa: the second step of a sign-in (docs/portal.md). The challenge's
 * mfa_token lives only in the sealed `__Host-gh_flow` cookie; the code or recovery code goes
 * to the service POST /auth/verify-2fa uses. Without JavaScript, a link (`?use=recovery`)
 * swaps the code field for a recovery-code field.
 */
const twoFactorRoutes: FastifyPluginAsyncTypebox<{ twoFactor: TwoFactorService }> = async (fastify, { twoFactor }) => {
  const { config, portalSession } = fastify
  const loginPage = `${config.portal?.publicUrl ?? ''}/portal/login`

  const page = (recovery: boolean): PageView => ({ template: 'two-factor', heading: 'Two-factor sign-in', recovery })
  const landing = (request: FastifyRequest): string | undefined => {
    const step = portalSession.flow.read(request)
    return step?.step === 'second_factor' ? portalSession.returnUrl(request, step.rd) : undefined
  }
  const postedPage = (request: FastifyRequest): PageView => ({
    ...page(typeof (request.body as Partial<TwoFactorForm> | undefined)?.recovery_code === 'string'),
    formTarget: landing(request)
  })
  // a stale or forged flow cookie, or none: the sign-in starts again
  const startAgain = async (reply: FastifyReply): Promise<FastifyReply> => await reply.redirect(loginPage, 303)

  fastify.get('/2fa', { schema: { querystring: TwoFactorQuery } }, async (request, reply) => {
    const step = portalSession.flow.read(request)
    if (step?.step !== 'second_factor') return await startAgain(reply)
    return reply.page(page(request.query.use === 'recovery'), { formTarget: portalSession.returnUrl(request, step.rd) })
  })

  fastify.post('/2fa', {
    schema: { body: TwoFactorForm },
    config: { rateLimit: fastify.rateLimits.login, portalForm: postedPage }
  }, async (request, reply) => {
    const step = portalSession.flow.read(request)
    if (step?.step !== 'second_factor') return await startAgain(reply)
    const { code, recovery_code: recoveryCode } = request.body
    const proof = recoveryCode !== undefined ? { recoveryCode } : { code }
    const { pair } = await twoFactor.completeChallenge(step.mfaToken, proof, portalSession.context(request))
    return await portalSession.signedIn(request, reply, pair, portalSession.returnUrl(request, step.rd))
  })
}

export default twoFactorRoutes
