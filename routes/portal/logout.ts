import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PageView } from '../../plugins/portal.js'
import { LogoutForm, ReturnQuery } from '../../schemas/portal.js'
import { TokenMissing } from '../../src/errors.js'
import { PORTAL_REFRESH_COOKIE } from '../../src/http/credentials.js'
import type { Claims } from '../../src/tokens/claims.js'

/**
 * GET and POST /portal/logout?rd=: a page that asks first (a link alone must not sign anyone
 * out), then ends the portal session as POST /auth/logout does — here (`local`) or on every device
 * (`global`) — clears the portal's cookies and the pending step, and 303s to the return URL;
 * without `rd`, to the sign-in page saying "You are signed out". Public: without a session the
 * cookies are cleared all the same. `global` needs a live session, as the JSON route's does.
 */
const logoutRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, portalSession } = fastify
  const { sessions } = fastify.services
  const signedOut = `${config.portal?.publicUrl ?? ''}/portal/login?done=logout`

  const target = (request: FastifyRequest, rd: string | undefined): string => rd === undefined || rd === '' ? signedOut : portalSession.returnUrl(request, rd)
  const page = (rd: string | undefined, email?: string): PageView => ({ template: 'logout', heading: 'Sign out', rd, email })

  /** The session the browser holds: its refresh cookie first (as /auth/logout), else its access cookie. */
  function sessionOf (request: FastifyRequest): Claims | undefined {
    const refresh = request.cookies[PORTAL_REFRESH_COOKIE]
    if (refresh !== undefined) return sessions.verifyRefresh(refresh)
    const access = request.cookies.access_token
    return access === undefined ? undefined : sessions.verifyAccess(access)
  }

  fastify.get('/logout', { schema: { querystring: ReturnQuery } }, async (request, reply) => {
    const { rd } = request.query
    const claims = await portalSession.claims(request, reply)
    return reply.page(page(rd === undefined ? undefined : target(request, rd), claims?.email), { formTarget: target(request, rd) })
  })

  fastify.post('/logout', {
    schema: { body: LogoutForm },
    config: {
      portalForm: (request) => {
        const rd = (request.body as Partial<LogoutForm> | undefined)?.rd
        return page(rd === undefined ? undefined : target(request, rd))
      }
    }
  }, async (request, reply) => {
    const { scope = 'local', rd } = request.body
    reply.clearPortalSession()
    portalSession.flow.clear(reply)
    let claims: Claims | undefined
    try {
      claims = sessionOf(request)
    } catch (err) {
      // a session already over is signed out here; everywhere needs proof of a live one
      if (scope !== 'local') throw err
    }
    if (claims !== undefined) await sessions.logout(claims, scope, portalSession.context(request))
    else if (scope !== 'local') throw new TokenMissing()
    return portalSession.returnTo(request, reply, target(request, rd))
  })
}

export default logoutRoutes
