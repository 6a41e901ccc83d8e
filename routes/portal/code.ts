import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { EmailCodeForm, EmailCodeRequestForm, ReturnQuery } from '../../schemas/portal.js'
import { FLOW_MAX_AGE } from '../../src/portal/flow.js'

/**
 * GET and POST /portal/code and /portal/code/verify: signing in with a code mailed to the address
 * (docs/portal.md), registered only with ENABLE_EMAIL_OTP. The mail request is POST /auth/send-otp's
 * (`login`, the same answer for every address); the code is POST /auth/verify-otp's. The address
 * waits in the sealed flow cookie between the two pages, so neither page's URL carries it.
 */
const codeRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, portalSession } = fastify
  const { recovery } = fastify.services
  const base = `${config.portal?.publicUrl ?? ''}/portal`
  const withRd = (path: string, rd: string): string => `${base}${path}?rd=${encodeURIComponent(rd)}`

  const requestPage = (rd: string, email?: string): PageView =>
    ({ template: 'code', heading: 'Email me a code', rd, form: { email }, loginHref: withRd('/login', rd) })
  const postedRequestPage = (request: FastifyRequest): PageView => {
    const body = request.body as Partial<EmailCodeRequestForm> | undefined
    return requestPage(portalSession.returnUrl(request, body?.rd), typeof body?.email === 'string' ? body.email : undefined)
  }
  const verifyPage = (email: string, rd: string): PageView =>
    ({ template: 'code-verify', heading: 'Enter your code', email, retryHref: withRd('/code', rd) })
  const pendingStep = (request: FastifyRequest) => {
    const step = portalSession.flow.read(request)
    return step?.step === 'email_code' ? step : undefined
  }
  // no address waiting (none asked, or the cookie expired or was forged): ask for one
  const askAgain = async (reply: FastifyReply): Promise<FastifyReply> => await reply.redirect(`${base}/code`, 303)

  fastify.get('/code', { schema: { querystring: ReturnQuery } }, async (request, reply) => {
    const target = portalSession.returnUrl(request, request.query.rd)
    return reply.page(requestPage(target))
  })

  fastify.post('/code', {
    schema: { body: EmailCodeRequestForm },
    config: { rateLimit: fastify.rateLimits.mail, portalForm: postedRequestPage }
  }, async (request, reply) => {
    const { email, rd } = request.body
    recovery.requestCode(email, 'login', portalSession.context(request))
    portalSession.flow.write(reply, { step: 'email_code', email, rd: portalSession.returnUrl(request, rd) }, FLOW_MAX_AGE)
    return await reply.redirect(`${base}/code/verify`, 303)
  })

  fastify.get('/code/verify', async (request, reply) => {
    const step = pendingStep(request)
    if (step === undefined) return await askAgain(reply)
    const target = portalSession.returnUrl(request, step.rd)
    return reply.page(verifyPage(step.email, target), { formTarget: target })
  })

  fastify.post('/code/verify', {
    schema: { body: EmailCodeForm },
    config: {
      rateLimit: fastify.rateLimits.login,
      portalForm: (request) => {
        const step = pendingStep(request)
        const target = portalSession.returnUrl(request, step?.rd)
        return { ...verifyPage(step?.email ?? '', target), formTarget: target }
      }
    }
  }, async (request, reply) => {
    const step = pendingStep(request)
    if (step === undefined) return await askAgain(reply)
    const target = portalSession.returnUrl(request, step.rd)
    const outcome = await recovery.verifyCode({ email: step.email, code: request.body.code, purpose: 'login' }, portalSession.context(request))
    if (outcome.purpose !== 'login') throw new Error('a login code answered for another purpose')
    if (outcome.status === 'second_factor_required') return await portalSession.secondFactorDue(reply, outcome.challenge, target)
    return await portalSession.signedIn(request, reply, outcome.pair, target)
  })
}

export default codeRoutes
