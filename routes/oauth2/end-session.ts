import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { PORTAL_REFRESH_COOKIE } from '../../src/http/credentials.js'
import { logoutRequestOf, planLogout, type LogoutRequest } from '../../src/oidc/end-session.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import type { Claims } from '../../src/tokens/claims.js'

/**
 * GET /oauth2/end-session (RP-initiated logout): a valid ID token hint (expired or not) naming the
 * browser's portal session ends it at once; otherwise the portal's sign-out page asks first, its
 * form posting here with the request's parameters (checked again, never a URL taken from the form).
 * Then 303 to the client's post_logout_redirect_uri (exactly registered) or the signed-out page.
 */
const endSessionRoutes = (oidc: OidcServices): FastifyPluginAsync => async (fastify) => {
  const { portalSession, config } = fastify
  const { sessions } = fastify.services
  const signedOut = `${config.portal?.publicUrl ?? ''}/portal/login?done=logout`
  const action = `${config.portal?.publicUrl ?? ''}/oauth2/end-session`

  function browserSession (request: FastifyRequest): Claims | undefined {
    for (const read of [() => sessions.verifyRefresh(request.cookies[PORTAL_REFRESH_COOKIE] ?? ''), () => sessions.verifyAccess(request.cookies.access_token ?? '')]) {
      try { return read() } catch { /* none, or over */ }
    }
    return undefined
  }

  async function signOut (request: FastifyRequest, reply: FastifyReply, claims: Claims | undefined, scope: 'local' | 'global'): Promise<void> {
    reply.clearPortalSession()
    portalSession.flow.clear(reply)
    if (claims !== undefined) await sessions.logout(claims, scope, portalSession.context(request))
  }

  fastify.get('/end-session', async (request, reply) => {
    const logout = logoutRequestOf(request.query as Record<string, unknown>)
    const plan = await planLogout(logout, oidc.flow.tokens, oidc.clients)
    const target = plan.target ?? signedOut
    const claims = browserSession(request)
    if (plan.sid !== undefined && claims?.session_id === plan.sid) {
      await signOut(request, reply, claims, 'local')
      return await reply.redirect(target, 303)
    }
    const hidden: Record<string, string> = { ...logout }
    return reply.page({ template: 'logout', heading: 'Sign out', rd: undefined, email: claims?.email, clientName: plan.client?.name, action, hidden }, { formTarget: target })
  })

  fastify.post('/end-session', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>
    const logout: LogoutRequest = logoutRequestOf(body)
    const plan = await planLogout(logout, oidc.flow.tokens, oidc.clients)
    const scope = body.scope === 'global' ? 'global' : 'local'
    const claims = browserSession(request)
    await signOut(request, reply, claims, claims === undefined ? 'local' : scope)
    return await reply.redirect(plan.target ?? signedOut, 303)
  })
}

export default endSessionRoutes
