import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { RegisterForm, ReturnQuery } from '../../schemas/portal.js'

/**
 * GET and POST /portal/register (only with ENABLE_REGISTER: routes/portal/index.ts registers it
 * then, so off it is a 404): the account is made by the same service call as POST /auth/register,
 * under the same per-address limit, and the browser is signed in to it.
 */
const registerRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, portalSession } = fastify
  const { auth } = fastify.services
  const loginUrl = `${config.portal?.publicUrl ?? ''}/portal/login`

  const registerPage = (rd: string, form: { name?: string, email?: string } = {}): PageView =>
    ({ template: 'register', heading: 'Create an account', rd, form, links: [{ href: `${loginUrl}?rd=${encodeURIComponent(rd)}`, text: 'I have an account' }] })

  const postedPage = (request: FastifyRequest): PageView => {
    const body = request.body as Partial<Record<keyof RegisterForm, unknown>> | undefined
    const text = (value: unknown) => typeof value === 'string' ? value : undefined
    return registerPage(portalSession.returnUrl(request, body?.rd), { name: text(body?.name), email: text(body?.email) })
  }

  fastify.get('/register', { schema: { querystring: ReturnQuery } }, async (request, reply) => {
    const target = portalSession.returnUrl(request, request.query.rd)
    return reply.page(registerPage(target), { formTarget: target })
  })

  fastify.post('/register', {
    schema: { body: RegisterForm },
    // the limit of POST /auth/register (and of every sign-in): one group per client address
    config: { rateLimit: fastify.rateLimits.login, portalForm: postedPage }
  }, async (request, reply) => {
    const { name, email, password, rd } = request.body
    const target = portalSession.returnUrl(request, rd)
    const pair = await auth.register({ email, password, name, roles: config.defaultRoles }, portalSession.context(request))
    return await portalSession.signedIn(request, reply, pair, target)
  })
}

export default registerRoutes
