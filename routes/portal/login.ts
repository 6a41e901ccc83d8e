import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { LoginForm, LoginQuery } from '../../schemas/portal.js'
import { assetPath } from '../../src/portal/files.js'
import passkeyRoutes from './passkey.js'

const NOTICES: Record<string, string> = {
  reset: 'Your password was changed. Sign in with the new one.',
  logout: 'You are signed out.'
}

/** GET and POST /portal/login: the sign-in page, and silent refresh for a browser that has a portal session. */
const loginRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, portalSession } = fastify
  const { auth, passkeys, idp } = fastify.services
  const base = `${config.portal?.publicUrl ?? ''}/portal`
  // with passkeys on: the button and the autofill's conditional request (passkeys.js), options from the JSON route
  const passkey = passkeys === undefined ? {} : { passkey: { optionsUrl: `${config.portal?.publicUrl ?? ''}/auth/passkeys/login/options` }, scripts: [assetPath(base, 'passkeys.js')] }

  function loginPage (rd: string, email: string | undefined): PageView {
    const query = `?rd=${encodeURIComponent(rd)}`
    const links = [
      // the providers whose discovery succeeded (a provider down is hidden until it answers again)
      ...(idp?.upstreams.visible() ?? []).map((p) => ({ href: `${config.portal?.publicUrl ?? ''}/auth/idp/${p.id}/start${query}`, text: `Sign in with ${p.displayName}` })),
      ...(config.emailOtp === undefined ? [] : [{ href: `${base}/code${query}`, text: 'Email me a code' }]),
      ...(config.passwordReset === undefined ? [] : [{ href: `${base}/forgot`, text: 'Forgot password' }]),
      ...(config.enableRegister ? [{ href: `${base}/register${query}`, text: 'Create an account' }] : [])
    ]
    return { template: 'login', heading: 'Sign in', rd, form: { email }, links, ...passkey }
  }

  const postedPage = (request: FastifyRequest): PageView => {
    const body = request.body as Partial<LoginForm> | undefined
    return loginPage(portalSession.returnUrl(request, body?.rd), typeof body?.email === 'string' ? body.email : undefined)
  }

  fastify.get('/login', { schema: { querystring: LoginQuery } }, async (request, reply) => {
    const { rd, prompt, login_hint: hint, done } = request.query
    const target = portalSession.returnUrl(request, rd)
    if (prompt !== 'login' && await portalSession.claims(request, reply) !== undefined) return portalSession.returnTo(request, reply, target)
    const page = loginPage(target, hint)
    // the page a first visit sees, the one worth keeping rendered (a sign-in page that is slow under load is a denial of service)
    return reply.page({ ...page, notice: done === undefined ? undefined : NOTICES[done] }, { formTarget: target, reuse: true })
  })

  fastify.post('/login', { schema: { body: LoginForm }, config: { rateLimit: fastify.rateLimits.login, portalForm: postedPage } }, async (request, reply) => {
    const { email, password, rd } = request.body
    const target = portalSession.returnUrl(request, rd)
    const outcome = await auth.login(email, password, portalSession.context(request))
    if (outcome.status === 'second_factor_required') return await portalSession.secondFactorDue(reply, outcome.challenge, target)
    return await portalSession.signedIn(request, reply, outcome.pair, target)
  })

  if (passkeys !== undefined) await fastify.register(passkeyRoutes, { passkeys, page: postedPage })
}

export default loginRoutes
