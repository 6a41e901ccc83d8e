import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { IdpParams, IdpStartQuery } from '../../schemas/idp-providers.js'
import type { IdpProvider } from '../../src/config/idp.js'
import { catalogueCode, catalogueEntry, NotFound, type ErrorCode } from '../../src/errors.js'
import type { IdpServices } from '../../src/idp/index.js'
import { PENDING_LINK_AGE, type CallbackOutcome, type UnverifiedLinkRefused, type UpstreamError } from '../../src/idp/idp-flow.js'
import { IDP_COOKIE, IDP_COOKIE_AGE } from '../../src/idp/state-cookie.js'
import { contextOf } from '../../src/http/caller.js'

type PageCode = Extract<ErrorCode, 'idp_invalid' | 'idp_error' | 'domain_not_allowed' | 'link_refused' | 'signup_disabled' | 'identity_in_use' | 'idp_unavailable'>

/** What a person reads for each page (the catalogue's message is written for programs); `name`: the provider's display name. */
const PAGES: Record<PageCode, (name: string) => { heading: string, text: string }> = {
  idp_invalid: (name) => ({ heading: 'Sign-in failed', text: `The answer from ${name} could not be verified. Start the sign-in again.` }),
  idp_error: (name) => ({ heading: 'Sign-in failed', text: `${name} did not sign you in.` }),
  domain_not_allowed: () => ({ heading: 'Sign-in refused', text: 'Accounts of this email domain may not sign in here.' }),
  link_refused: (name) => ({ heading: 'Sign-in refused', text: `An account with this email exists; ${name} cannot be connected to it.` }),
  signup_disabled: (name) => ({ heading: 'Sign-in refused', text: `No account exists for this ${name} identity, and none can be created through it.` }),
  identity_in_use: (name) => ({ heading: 'Already connected', text: `This ${name} identity is connected to another account.` }),
  idp_unavailable: (name) => ({ heading: 'Sign-in unavailable', text: `${name} is unavailable. Try again in a moment.` })
}

function wordsOf (code: PageCode, error: unknown, name: string): { heading: string, text: string } {
  if ((error as Partial<UpstreamError>).upstreamCode === 'access_denied') return { heading: 'Sign-in cancelled', text: `The sign-in with ${name} was cancelled.` }
  if ((error as Partial<UnverifiedLinkRefused>).unverified === true) return { heading: 'Sign-in refused', text: `An account with this email exists. Sign in, then connect ${name} from your account.` }
  return PAGES[code](name)
}

/**
 * GET /auth/idp/:provider/start and /callback (docs/identity-providers.md), registered by src/app.ts
 * under /auth/idp only with ENABLE_IDP_LOGIN, inside the portal's plugins (its session, pages,
 * headers and error pages), so the answers are the portal's pages. Not in /openapi.json.
 */
const idpRoutes = (idp: IdpServices): FastifyPluginAsyncTypebox => async (fastify) => {
  const { config, portalSession } = fastify
  const { recentAuth } = fastify.services
  const publicUrl = config.portal?.publicUrl ?? ''
  const cookie = { httpOnly: true, sameSite: 'lax', secure: true, path: '/' } as const
  // the callback makes outbound calls: it counts against the sign-in limit, so it cannot be used to flood a provider
  const limited = { rateLimit: fastify.rateLimits.login }

  const providerOf = (id: string): IdpProvider => idp.upstreams.provider(id) ?? (() => { throw new NotFound('The requested page was not found') })()

  function page (reply: FastifyReply, provider: IdpProvider, error: unknown, rd: string): FastifyReply {
    const code = catalogueCode(error) as PageCode
    const { heading, text } = wordsOf(code, error, provider.displayName)
    const links = [{ href: portalSession.loginUrl(rd), text: 'Back to sign-in' }]
    return reply.page({ template: 'message', heading, error: { code, message: text }, paragraphs: [], links }, { status: catalogueEntry(code).status })
  }

  /**
   * `intent=link` needs a portal session with a recent sign-in (REAUTH_MAX_AGE), as every change
   * that adds a way in does. Without one the browser goes to the sign-in page with `prompt=login`,
   * coming back to this very start afterwards: signing in again is the re-authentication.
   */
  fastify.get('/:provider/start', { schema: { params: IdpParams, querystring: IdpStartQuery } }, async (request, reply) => {
    const provider = providerOf(request.params.provider)
    const rd = portalSession.returnUrl(request, request.query.rd)
    const intent = request.query.intent ?? 'login'
    let userId: string | undefined
    if (intent === 'link') {
      const claims = await portalSession.claims(request, reply)
      if (claims === undefined || !recentAuth.isRecent(claims)) {
        return await reply.redirect(`${publicUrl}/portal/login?prompt=login&rd=${encodeURIComponent(`${publicUrl}${request.url}`)}`, 303)
      }
      userId = claims.user_id
    }
    try {
      const { url, flow } = await idp.flow.begin(provider, { rd, intent, userId })
      reply.setCookie(IDP_COOKIE, idp.stateCookie.seal(flow, IDP_COOKIE_AGE), { ...cookie, maxAge: IDP_COOKIE_AGE })
      return await reply.redirect(url, 302)
    } catch (err) {
      return page(reply, provider, err, rd)
    }
  })

  /**
   * The query is read as it comes, without a schema: a callback that is not what the provider
   * sends (a parameter twice, one too long) fails a check and is a 400 idp_invalid page like any
   * other, never a 422. Every callback clears the cookie, so each works once, in its own browser.
   */
  fastify.get('/:provider/callback', { schema: { params: IdpParams }, config: limited }, async (request, reply) => {
    const provider = providerOf(request.params.provider)
    const flow = idp.stateCookie.open(request.cookies[IDP_COOKIE])
    reply.clearCookie(IDP_COOKIE, cookie)
    const rd = flow === undefined ? portalSession.returnUrl(request, undefined) : portalSession.returnUrl(request, flow.rd)
    const search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''
    try {
      const outcome = await idp.flow.callback({
        provider,
        flow,
        query: request.query as Record<string, unknown>,
        url: new URL(`${idp.upstreams.redirectUri(provider.id)}${search}`),
        sessionUserId: flow?.intent === 'link' ? (await portalSession.claims(request, reply))?.user_id : undefined,
        context: contextOf(request)
      })
      return await answer(request, reply, provider, outcome, rd)
    } catch (err) {
      const code = catalogueCode(err)
      if (code === undefined || !(code in PAGES)) throw err
      request.log.info({ provider: provider.id, code, reason: (err as { reason?: string }).reason }, 'identity provider sign-in refused')
      return page(reply, provider, err, rd)
    }
  })

  async function answer (request: FastifyRequest, reply: FastifyReply, provider: IdpProvider, outcome: CallbackOutcome, rd: string): Promise<FastifyReply> {
    switch (outcome.status) {
      case 'signed_in':
        return await portalSession.signedIn(request, reply, outcome.pair, rd)
      case 'second_factor_required':
        return await portalSession.secondFactorDue(reply, outcome.challenge, rd)
      case 'linked':
        return portalSession.returnTo(request, reply, rd)
      case 'pending_link': {
        portalSession.flow.write(reply, { step: 'pending_link', link: outcome.link, rd }, PENDING_LINK_AGE)
        const signIn = `${publicUrl}/portal/login?rd=${encodeURIComponent(rd)}&login_hint=${encodeURIComponent(outcome.link.email)}`
        const text = `An account with this email exists — sign in to connect ${provider.displayName}.`
        return reply.page({ template: 'message', heading: `Connect ${provider.displayName}`, notice: text, paragraphs: [], links: [{ href: signIn, text: 'Sign in' }] })
      }
    }
  }
}

export default idpRoutes
