import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DENIAL_REASONS, type DenialReason } from '../../schemas/errors.js'
import { ForbiddenQuery } from '../../schemas/portal.js'
import { ROLES_MAX_LENGTH } from '../../schemas/verify.js'
import { listedRoles } from '../../src/http/forward-auth.js'
import { refusalText } from '../../src/portal/forbidden-page.js'

/** Role names as users carry them (schemas/common.ts Role): a link cannot put arbitrary text on the page. */
const ROLE = /^[a-z][a-z0-9_-]{0,31}$/
const ROLES_SHOWN = 32

interface Denial {
  /** the signed-in user's address, if any */
  email: string | undefined
  /** one of the 403 reasons; anything else is left out */
  reason: unknown
  /** the roles asked for, comma- or space-separated as /auth/verify's `roles`; anything else is left out */
  roles: unknown
  /** AUTHZ_DENIAL_DETAILS: false leaves the roles out */
  details: boolean
}

interface ForbiddenView {
  heading: string
  email: string | undefined
  reason: DenialReason | undefined
  requiredRoles: string[]
  error: { code: 'forbidden', message: string }
}

/**
 * The forbidden page's model, from what the query (or the caller's own denial) says: the reason
 * only if it is a known one, the roles only if role-shaped, only for `missing_role` (or no reason),
 * and never with AUTHZ_DENIAL_DETAILS=false.
 */
function forbiddenView ({ email, reason, roles, details }: Denial): ForbiddenView {
  const known = DENIAL_REASONS.find((r) => r === reason)
  const rolesApply = details && typeof roles === 'string' && roles.length <= ROLES_MAX_LENGTH && (known === undefined || known === 'missing_role')
  const requiredRoles = rolesApply ? listedRoles(roles).filter((role) => ROLE.test(role)).slice(0, ROLES_SHOWN) : []
  const explanation = refusalText(known)
  return {
    heading: 'Access denied',
    email,
    reason: requiredRoles.length > 0 ? known ?? 'missing_role' : known,
    requiredRoles,
    error: { code: 'forbidden', message: explanation }
  }
}

/**
 * GET /portal/forbidden?rd=&reason=&roles=: where a signed-in user who lacks access lands
 * (docs/portal.md). Always 403, never a redirect: who is signed in, why access was refused, and
 * the ways on — sign in as someone else (coming back to `rd`), or the account page.
 */
const forbiddenRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config, portalSession } = fastify
  const base = `${config.portal?.publicUrl ?? ''}/portal`

  fastify.get('/forbidden', { schema: { querystring: ForbiddenQuery } }, async (request, reply) => {
    const { rd, reason, roles } = request.query
    const claims = await portalSession.claims(request, reply)
    const target = portalSession.returnUrl(request, rd)
    const view = forbiddenView({ email: claims?.email, reason, roles, details: config.authzDenialDetails })
    const switchHref = `${base}/login?prompt=login&rd=${encodeURIComponent(target)}`
    return reply.page({ template: 'forbidden', ...view, switchHref }, { status: 403 })
  })
}

export default forbiddenRoutes
