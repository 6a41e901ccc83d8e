import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ConsentForm, ConsentQuery } from '../../schemas/portal.js'
import { AuthorizePageError, AuthorizeRedirectError } from '../../src/oidc/authorize-request.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import type { Claims } from '../../src/tokens/claims.js'

/** What each scope lets the application do, in the words the page shows. */
const SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are (your account id)',
  profile: 'See your name',
  email: 'See your email address and whether it is verified',
  roles: 'See your roles',
  offline_access: 'Stay signed in to your account while you are away'
}

/**
 * GET and POST /portal/consent?interaction= (§15.1 step 4): the application's name and the scopes
 * in words, Allow or Deny, for the portal session the request was made in. Allow records the
 * grant and lands on the application with a code; Deny with access_denied.
 */
const consentRoutes = (oidc: OidcServices): FastifyPluginAsyncTypebox => async (fastify) => {
  const { portalSession } = fastify
  const { authorizer } = oidc.flow

  function refused (reply: FastifyReply, err: AuthorizePageError): FastifyReply {
    return reply.page({ template: 'message', heading: 'Sign-in request refused', error: { code: err.code, message: err.message }, paragraphs: [], links: [] }, { status: 400 })
  }

  fastify.get('/consent', { schema: { querystring: ConsentQuery }, preHandler: portalSession.required }, async (request, reply) => {
    const claims = request.claims as Claims
    try {
      const { client, request: asked } = await authorizer.pendingConsent(request.query.interaction, claims)
      const scopes = asked.scopes.map((s) => SCOPE_WORDS[s] ?? s)
      return reply.page({ template: 'consent', heading: `Allow ${client.name}?`, clientName: client.name, email: claims.email, scopes, interaction: request.query.interaction }, { formTarget: asked.redirectUri })
    } catch (err) {
      if (err instanceof AuthorizePageError) return refused(reply, err)
      throw err
    }
  })

  fastify.post('/consent', { schema: { body: ConsentForm }, preHandler: portalSession.required }, async (request, reply) => {
    const claims = request.claims as Claims
    try {
      const url = await authorizer.decide(request.body.interaction, claims, request.body.decision === 'allow', portalSession.context(request))
      return await reply.redirect(url, 303)
    } catch (err) {
      if (err instanceof AuthorizeRedirectError) return await reply.redirect(authorizer.errorUrl(err), 303)
      if (err instanceof AuthorizePageError) return refused(reply, err)
      throw err
    }
  })
}

export default consentRoutes
