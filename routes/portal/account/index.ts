import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccountQuery } from '../../../schemas/portal.js'
import { NotFound } from '../../../src/errors.js'
import type { Claims } from '../../../src/tokens/claims.js'
import { qrSvg } from '../../../src/two-factor/totp.js'
import { accountActions } from './actions.js'
import { accountPage, DONE } from './page.js'
import { passkeyActions } from './passkeys.js'
import { identityActions } from './identities.js'

/**
 * /portal/account: the signed-in user's own page (a portal session, else the sign-in page and
 * back): sessions, password, second factor, passkeys, connected accounts, authorized apps. Each action is a POST of its own
 * (./actions.ts) calling what its JSON route calls.
 */
const accountRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { portalSession } = fastify
  const { twoFactor, passkeys, identities } = fastify.services
  const page = accountPage(fastify)

  fastify.get('/account', { schema: { querystring: AccountQuery }, preHandler: portalSession.required }, async (request, reply) => {
    const { done } = request.query
    return reply.page(await page(request, { notice: done === undefined ? undefined : DONE[done] }))
  })

  if (twoFactor !== undefined) {
    // the pending factor's QR code, encoding exactly its otpauth URI (as POST /auth/enable-2fa's qr_svg does)
    fastify.get('/account/totp/qr.svg', { preHandler: portalSession.required }, async (request, reply) => {
      const pending = await twoFactor.pendingEnrolment((request.claims as Claims).user_id)
      if (pending === undefined) throw new NotFound('No two-factor enrolment is pending')
      return await reply.type('image/svg+xml').send(await qrSvg(pending.otpauthUri))
    })
  }

  await fastify.register(accountActions, { page })
  if (passkeys !== undefined) await fastify.register(passkeyActions, { page, passkeys })
  if (identities !== undefined) await fastify.register(identityActions, { page, identities })
}

export default accountRoutes
