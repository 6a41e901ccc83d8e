import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { ForgotForm, ForgotQuery, ResetForm } from '../../schemas/portal.js'
import { ValidationFailed } from '../../src/errors.js'
import { hashedAssetNames } from '../../src/portal/files.js'

const SENT = 'If an account exists for this address, a link to reset its password was sent. It works once, for a limited time.'

/**
 * The token of a reset link pasted whole (`…/portal/reset#token=…`: the `token=` of its fragment)
 * or of a bare token; empty when there is none.
 */
function resetTokenOf (pasted: string | undefined): string {
  const value = (pasted ?? '').trim()
  const hash = value.indexOf('#')
  if (hash === -1) return /^[A-Za-z0-9_-]+$/.test(value) ? value : ''
  return new URLSearchParams(value.slice(hash + 1)).get('token') ?? ''
}

/**
 * GET and POST /portal/forgot and /portal/reset (only with ENABLE_PASSWORD_RESET): the same
 * service calls, limits and answers as POST /auth/forgot-password and /auth/reset-password, the
 * first one answer for every address. The reset link carries its token after `#`, which reaches
 * no server: reset.js moves it into the form; without JavaScript the link is pasted.
 */
const recoveryRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config } = fastify
  const { recovery } = fastify.services
  const base = `${config.portal?.publicUrl ?? ''}/portal`
  const resetScript = `${base}/assets/${hashedAssetNames().get('reset.js') ?? 'reset.js'}`
  const totp = config.totp !== undefined
  const signIn = { href: `${base}/login`, text: 'Back to sign in' }

  const forgotPage = (email?: string): PageView => ({ template: 'forgot', heading: 'Forgot password', form: { email }, links: [signIn] })

  /** `token`: the one the page carries on (a failed attempt keeps it, so the form can be sent again); empty: reset.js or the pasted link supplies it. */
  const resetPage = (token: string): PageView =>
    ({ template: 'reset', heading: 'Choose a new password', scripts: [resetScript], form: { token }, totp, links: [{ href: `${base}/forgot`, text: 'Ask for a new link' }, signIn] })

  const postedToken = (body: Partial<ResetForm> | undefined): string =>
    typeof body?.token === 'string' && body.token !== '' ? body.token : resetTokenOf(typeof body?.reset_link === 'string' ? body.reset_link : undefined)

  fastify.get('/forgot', { schema: { querystring: ForgotQuery } }, async (request, reply) => {
    return reply.page({ ...forgotPage(), notice: request.query.sent === '1' ? SENT : undefined })
  })

  fastify.post('/forgot', {
    schema: { body: ForgotForm },
    config: { rateLimit: fastify.rateLimits.mail, portalForm: (request: FastifyRequest) => forgotPage((request.body as Partial<ForgotForm> | undefined)?.email) }
  }, async (request, reply) => {
    recovery.requestReset(request.body.email, fastify.portalSession.context(request))
    return await reply.redirect(`${base}/forgot?sent=1`, 303)
  })

  fastify.get('/reset', async (_request, reply) => reply.page(resetPage('')))

  fastify.post('/reset', {
    schema: { body: ResetForm },
    config: { rateLimit: fastify.rateLimits.login, portalForm: (request: FastifyRequest) => resetPage(postedToken(request.body as Partial<ResetForm> | undefined)) }
  }, async (request, reply) => {
    const { new_password: password, code } = request.body
    const token = postedToken(request.body)
    if (token === '') throw new ValidationFailed({ reset_link: ['The reset_link field is required'] })
    await recovery.resetPassword(token, password, code === '' ? undefined : code, fastify.portalSession.context(request))
    return await reply.redirect(`${base}/login?done=reset`, 303)
  })
}

export default recoveryRoutes
