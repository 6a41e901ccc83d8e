import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import type { PageView } from '../../../plugins/portal.js'
import {
  ChangePasswordForm, RecoveryCodesForm, RevokeAppForm, RevokeOthersForm, RevokeSessionForm, TotpConfirmForm, TotpDisableForm, TotpEnrolForm
} from '../../../schemas/portal.js'
import type { Remover } from '../../../src/accounts/credentials.js'
import type { RequestContext } from '../../../src/events.js'
import { DONE, type AccountState } from './page.js'
import { callerOf } from '../../../src/http/caller.js'

export type AccountPage = (request: FastifyRequest, state?: AccountState) => Promise<PageView>

/**
 * What every action of the account page shares: the portal session checked before the body is
 * validated (as /api's guard does), so a failure can show the account page again, error beside its
 * field; the login limit where the JSON route has it; and the 303 to the page, saying what was done.
 */
export function accountForms (fastify: FastifyInstance, page: AccountPage) {
  const { portalSession } = fastify
  const base = `${fastify.config.portal?.publicUrl ?? ''}/portal`
  // counted after the CSRF and session checks, so the page of a refused attempt knows whose it is
  const limited = { rateLimit: { ...fastify.rateLimits.login, hook: 'preValidation' as const } }

  // portalSession.required, but coming back to the page: a POST's own URL has nothing to GET
  const signedIn: preValidationAsyncHookHandler = async (request, reply) => {
    const claims = await portalSession.claims(request, reply)
    if (claims !== undefined) request.claims = claims
    else await reply.redirect(portalSession.loginUrl(`${base}/account`), 303)
  }

  return {
    callerOf,
    /**
     * A removal of one of the caller's own ways in (a passkey, a connected account): recent
     * authentication first (the sign-in's age, or the form's password: empty means absent), then
     * `remove` as the user themself, who keeps their last credential.
     */
    async removeOwn (request: FastifyRequest, password: string | undefined, remove: (userId: string, by: Remover, context: RequestContext) => Promise<void>) {
      const caller = callerOf(request)
      const context = portalSession.context(request)
      await fastify.services.recentAuth.require(caller, password === '' ? undefined : password, context)
      await remove(caller.user_id, { actorId: caller.user_id, admin: false }, context)
    },
    action<T extends TSchema> (name: string, body: T, limit: boolean) {
      return {
        schema: { body },
        preValidation: signedIn,
        config: { ...(limit && limited), portalForm: async (request: FastifyRequest) => await page(request, { failed: name }) }
      }
    },
    done: async (reply: FastifyReply, name: string) => await reply.redirect(`${base}/account?done=${name}`, 303)
  }
}

/**
 * POST /portal/account/{action}: each calls the service method of its JSON route, with that
 * route's limit, and answers 303 /portal/account?done={action}; recovery codes, shown once, are
 * the one 200.
 */
export const accountActions: FastifyPluginAsyncTypebox<{ page: AccountPage }> = async (fastify, { page }) => {
  const { portalSession } = fastify
  const { auth, sessions, twoFactor, oidc } = fastify.services
  const { callerOf, action, done } = accountForms(fastify, page)
  const shownOnce = async (request: FastifyRequest, reply: FastifyReply, name: string, recoveryCodes: string[]) =>
    await reply.page(await page(request, { notice: DONE[name], recoveryCodes }))

  fastify.post('/account/revoke-session', action('revoke-session', RevokeSessionForm, false), async (request, reply) => {
    const caller = callerOf(request)
    const current = request.body.session === caller.session_id
    await sessions.revokeOwn(caller.user_id, request.body.session, { reason: current ? 'logout_local' : 'session_ended', actorId: caller.user_id }, portalSession.context(request))
    if (current) reply.clearPortalSession()
    return await done(reply, 'revoke-session')
  })

  fastify.post('/account/revoke-others', action('revoke-others', RevokeOthersForm, false), async (request, reply) => {
    const caller = callerOf(request)
    await sessions.revoke({ userId: caller.user_id, exceptSessionId: caller.session_id }, { reason: 'logout_others', actorId: caller.user_id }, portalSession.context(request))
    return await done(reply, 'revoke-others')
  })

  fastify.post('/account/change-password', action('change-password', ChangePasswordForm, true), async (request, reply) => {
    const { current_password: current, new_password: next } = request.body
    await auth.changePassword(callerOf(request), current, next, portalSession.context(request))
    return await done(reply, 'change-password')
  })

  if (oidc !== undefined) {
    // as DELETE /api/auth/grants/:client_id: the consent and the child sessions of the app end
    fastify.post('/account/revoke-app', action('revoke-app', RevokeAppForm, false), async (request, reply) => {
      await oidc.grants.revoke(callerOf(request).user_id, request.body.client_id, portalSession.context(request))
      return await done(reply, 'revoke-app')
    })
  }

  if (twoFactor === undefined) return

  fastify.post('/account/totp-enrol', action('totp-enrol', TotpEnrolForm, true), async (request, reply) => {
    await twoFactor.enroll(callerOf(request), request.body.password, portalSession.context(request))
    return await done(reply, 'totp-enrol')
  })

  fastify.post('/account/totp-confirm', action('totp-confirm', TotpConfirmForm, true), async (request, reply) => {
    const { recoveryCodes, pair } = await twoFactor.activate(callerOf(request), request.body.code, portalSession.context(request))
    // the same session, now at aal2: its new tokens keep this browser signed in
    reply.setPortalSession(pair)
    return await shownOnce(request, reply, 'totp-confirm', recoveryCodes)
  })

  fastify.post('/account/recovery-codes', action('recovery-codes', RecoveryCodesForm, true), async (request, reply) => {
    const { password, code } = request.body
    return await shownOnce(request, reply, 'recovery-codes', await twoFactor.regenerateRecoveryCodes(callerOf(request), password, code, portalSession.context(request)))
  })

  fastify.post('/account/totp-disable', action('totp-disable', TotpDisableForm, true), async (request, reply) => {
    const { password, code } = request.body
    const proof = /^[0-9]{6}$/.test(code) ? { code } : { recoveryCode: code }
    await twoFactor.disable(callerOf(request), password, proof, portalSession.context(request))
    return await done(reply, 'totp-disable')
  })
}
