import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PasskeyAddForm, PasskeyRemoveForm, PasskeyRenameForm } from '../../../schemas/portal.js'
import type { PasskeyService } from '../../../src/passkeys/passkey-service.js'
import { postedCredential } from '../passkey.js'
import { accountForms, type AccountPage } from './actions.js'

/**
 * POST /portal/account/passkey-add, -rename, -remove (only with ENABLE_PASSKEYS): what POST
 * /auth/passkeys/register/verify, PATCH and DELETE /api/auth/passkeys/:id do, with their rules. Adding
 * took its recent authentication at the options route (passkeys.js asked it with the password when
 * the page had the field); removing takes it here, from the sign-in's age or the password field.
 */
export const passkeyActions: FastifyPluginAsyncTypebox<{ page: AccountPage, passkeys: PasskeyService }> = async (fastify, { page, passkeys }) => {
  const { portalSession } = fastify
  const { callerOf, action, done, removeOwn } = accountForms(fastify, page)

  fastify.post('/account/passkey-add', action('passkey-add', PasskeyAddForm, true), async (request, reply) => {
    const { challenge_id: challengeId, credential, name } = request.body
    const given = name?.trim()
    await passkeys.register(callerOf(request), { challengeId, credential: postedCredential(credential), name: given === '' ? undefined : given }, portalSession.context(request))
    return await done(reply, 'passkey-add')
  })

  fastify.post('/account/passkey-rename', action('passkey-rename', PasskeyRenameForm, false), async (request, reply) => {
    await passkeys.rename(callerOf(request).user_id, request.body.passkey, request.body.name.trim())
    return await done(reply, 'passkey-rename')
  })

  fastify.post('/account/passkey-remove', action('passkey-remove', PasskeyRemoveForm, true), async (request, reply) => {
    const { passkey, password } = request.body
    await removeOwn(request, password, async (userId, by, context) => { await passkeys.remove(userId, passkey, by, context) })
    return await done(reply, 'passkey-remove')
  })
}
