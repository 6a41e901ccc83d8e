import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { AuthorizePageError, AuthorizeRedirectError, checkClient, checkRequest } from '../../src/oidc/authorize-request.js'
import type { Next } from '../../src/oidc/authorizer.js'
import type { OidcServices } from '../../src/oidc/provider.js'

const PAGE_TEXT: Record<AuthorizePageError['code'], string> = {
  invalid_client: 'The application that sent you here is unknown or disabled.',
  invalid_redirect_uri: 'The application sent you here with a return address it did not register.',
  invalid_request: 'This sign-in request cannot be continued.'
}

/**
 * GET /oauth2/authorize (§15.1): steps 1 and 2 here, the rest in src/oidc/authorizer.ts. A client
 * or redirect_uri that cannot be trusted gets a 400 page, never a redirect; every later error
 * goes back to the redirect_uri. Inside a scope with the portal's plugins: its session, its pages.
 */
const authorizeRoutes = (oidc: OidcServices): FastifyPluginAsync => async (fastify) => {
  const { portalSession } = fastify
  const { authorizer } = oidc.flow

  async function go (reply: FastifyReply, next: Next): Promise<FastifyReply> {
    return await reply.redirect(next.url, next.kind === 'client' ? 302 : 303)
  }

  async function answer (request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>): Promise<FastifyReply> {
    const context = portalSession.context(request)
    const interaction = query.interaction
    if (interaction !== undefined) {
      if (typeof interaction !== 'string') throw new AuthorizePageError('invalid_request', PAGE_TEXT.invalid_request)
      return await go(reply, await authorizer.resume(interaction, await portalSession.claims(request, reply), context))
    }
    const clientId = query.client_id
    const client = typeof clientId === 'string' && clientId.length <= 64 ? await oidc.clients.find(clientId) : undefined
    const redirectUri = checkClient(query, client)
    const checked = checkRequest(query, client!, redirectUri)
    return await go(reply, await authorizer.begin(client!, checked, await portalSession.claims(request, reply), context))
  }

  fastify.get('/authorize', async (request, reply) => {
    try {
      return await answer(request, reply, request.query as Record<string, unknown>)
    } catch (err) {
      if (err instanceof AuthorizeRedirectError) return await reply.redirect(authorizer.errorUrl(err), 302)
      if (!(err instanceof AuthorizePageError)) throw err
      request.log.info({ code: err.code }, 'authorization request refused')
      return reply.page({ template: 'message', heading: 'Sign-in request refused', error: { code: err.code, message: PAGE_TEXT[err.code] }, paragraphs: [err.message], links: [] }, { status: 400 })
    }
  })
}

export default authorizeRoutes
