import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdentityRemoveForm } from '../../../schemas/identities.js'
import type { IdentityList } from '../../../src/accounts/identities.js'
import { accountForms, type AccountPage } from './actions.js'

/**
 * POST /portal/account/identity-remove (only with ENABLE_IDP_LOGIN): what DELETE
 * /api/auth/identities/:id does, with its rules: recent authentication (the sign-in's age or the
 * password beside the button), and the last credential kept. Connecting is a link to
 * /auth/idp/<id>/start?intent=link, the sign-in flow's.
 */
export const identityActions: FastifyPluginAsyncTypebox<{ page: AccountPage, identities: IdentityList }> = async (fastify, { page, identities }) => {
  const { action, done, removeOwn } = accountForms(fastify, page)

  fastify.post('/account/identity-remove', action('identity-remove', IdentityRemoveForm, true), async (request, reply) => {
    const { identity, password } = request.body
    await removeOwn(request, password, async (userId, by, context) => { await identities.remove(userId, identity, by, context) })
    return await done(reply, 'identity-remove')
  })
}
