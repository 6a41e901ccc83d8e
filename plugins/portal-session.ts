import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { Envelope } from '../src/crypto/envelope.js'
import { RedirectLoop } from '../src/errors.js'
import type { AuditRecord, RequestContext } from '../src/events.js'
import { PORTAL_REFRESH_COOKIE } from '../src/http/credentials.js'
import { FlowCookie, SECOND_FACTOR_FLOW_AGE, type FlowStep } from '../src/portal/flow.js'
import { countRedirect } from '../src/portal/loop-guard.js'
import { checkReturnUrl } from '../src/portal/return-url.js'
import type { TokenPair } from '../src/sessions/session-service.js'
import type { SecondFactorChallenge } from '../src/two-factor/two-factor-service.js'
import type { Claims } from '../src/tokens/claims.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The portal's sign-in state: its session, its pending step, its return URLs (docs/portal.md). */
    portalSession: PortalSession
  }
}

export const FLOW_COOKIE = '__Host-gh_flow'
export const LOOP_COOKIE = '__Host-gh_rd'

export interface PortalSession {
  /** what the services are told about a page's request: its audit events say `detail: portal` */
  context (request: FastifyRequest): RequestContext
  /** `rd` if it is an allowed return URL (docs/portal.md#return-urls), else the default; a refused value is audited */
  returnUrl (request: FastifyRequest, rd: unknown): string
  /** the signed-in user: a valid access cookie, else the refresh cookie rotated (new cookies set); undefined when neither */
  claims (request: FastifyRequest, reply: FastifyReply): Promise<Claims | undefined>
  /** a preHandler: no portal session → 303 to the sign-in page, coming back here afterwards */
  required: preHandlerAsyncHookHandler
  /** ends the browser's previous session, sets the new one's cookies, forgets the pending step, 303 to `rd` */
  signedIn (request: FastifyRequest, reply: FastifyReply, pair: TokenPair, rd: string): Promise<FastifyReply>
  /** a first factor accepted, a second due: the challenge in the flow cookie (never in a URL), 303 /portal/2fa */
  secondFactorDue (reply: FastifyReply, challenge: SecondFactorChallenge, rd: string): Promise<FastifyReply>
  /** 303 to a return URL; the fourth to another host within 30 s is a redirect loop (508) */
  returnTo (request: FastifyRequest, reply: FastifyReply, url: string): FastifyReply
  /** the sign-in page's URL, coming back to `rd` */
  loginUrl (rd: string): string
  flow: {
    read (request: FastifyRequest): FlowStep | undefined
    write (reply: FastifyReply, step: FlowStep, maxAge: number): void
    clear (reply: FastifyReply): void
  }
}

/**
 * The portal session (docs/portal.md#sessions) is a §3 session: listed, revocable, refreshed by
 * rotation. This plugin is the one place that reads and writes its cookies, the sealed flow
 * cookie and the loop guard's counter, and the one place a return URL is checked.
 */
export default fp(async function portalSessionPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  const { sessions, events } = fastify.services
  const portal = config.portal
  if (portal === undefined || config.dataEncryptionKeys === undefined) throw new Error('the portal needs ENABLE_PORTAL and data encryption keys')
  const flowCookie = new FlowCookie(new Envelope(config.dataEncryptionKeys))
  const hostCookie = { httpOnly: true, sameSite: 'lax', secure: true, path: '/' } as const
  const loginPage = `${portal.publicUrl}/portal/login`

  const context = (request: FastifyRequest): RequestContext => ({ ip: request.ip, userAgent: request.headers['user-agent'], via: 'portal' })
  const audit = (record: AuditRecord, request: FastifyRequest): void => { events.emit('audit', { record, context: context(request) }) }
  const loginUrl = (rd: string): string => `${loginPage}?rd=${encodeURIComponent(rd)}`

  function returnUrl (request: FastifyRequest, rd: unknown): string {
    if (rd === undefined || rd === '') return portal!.defaultReturnUrl
    const checked = typeof rd === 'string' ? checkReturnUrl(rd, portal!) : undefined
    if (checked !== undefined) return checked
    audit({ event: 'return_url_refused', outcome: 'failure' }, request)
    return portal!.defaultReturnUrl
  }

  async function claims (request: FastifyRequest, reply: FastifyReply): Promise<Claims | undefined> {
    const access = request.cookies.access_token
    if (access !== undefined) {
      try { return sessions.verifyAccess(access) } catch { /* expired or revoked: the refresh cookie may renew it */ }
    }
    const refresh = request.cookies[PORTAL_REFRESH_COOKIE]
    if (refresh === undefined) return undefined
    try {
      const pair = await sessions.refresh(refresh, context(request))
      reply.setPortalSession(pair)
      return sessions.verifyAccess(pair.accessToken)
    } catch {
      reply.clearPortalSession()
      return undefined
    }
  }

  const required: preHandlerAsyncHookHandler = async function (request, reply) {
    const found = await claims(request, reply)
    if (found !== undefined) {
      request.claims = found
      return
    }
    await reply.redirect(loginUrl(`${portal.publicUrl}${request.url}`), 303)
  }

  function returnTo (request: FastifyRequest, reply: FastifyReply, url: string): FastifyReply {
    const host = new URL(url).hostname
    if (host !== portal!.publicHost) {
      const counted = countRedirect(request.cookies[LOOP_COOKIE], Date.now())
      reply.setCookie(LOOP_COOKIE, counted.cookie, { ...hostCookie, maxAge: counted.maxAge })
      if (counted.looping) {
        audit({ event: 'redirect_loop_detected', outcome: 'failure', userId: request.claims?.user_id }, request)
        throw new RedirectLoop()
      }
    }
    return reply.redirect(url, 303)
  }

  async function signedIn (request: FastifyRequest, reply: FastifyReply, pair: TokenPair, rd: string): Promise<FastifyReply> {
    const previous = request.cookies[PORTAL_REFRESH_COOKIE]
    if (previous !== undefined) {
      try {
        await sessions.logout(sessions.verifyRefresh(previous), 'local', context(request))
      } catch { /* already over */ }
    }
    reply.setPortalSession(pair)
    await completePendingLink(request, pair)
    flow.clear(reply)
    return returnTo(request, reply, rd)
  }

  /**
   * A link to an identity provider waiting in this browser (docs/identity-providers.md) completes
   * with the sign-in of the account whose email matched, password and second step included.
   */
  async function completePendingLink (request: FastifyRequest, pair: TokenPair): Promise<void> {
    const step = flow.read(request)
    const link = step?.step === 'pending_link' || step?.step === 'second_factor' ? step.link : undefined
    if (link !== undefined) await fastify.services.idp?.accounts.completePending(link, pair.user.id, context(request))
  }

  async function secondFactorDue (reply: FastifyReply, challenge: SecondFactorChallenge, rd: string): Promise<FastifyReply> {
    // whether the second step offers a passkey (`methods` names webauthn for a user who has one, not after a passkey sign-in)
    const webauthn = challenge.methods.includes('webauthn')
    // a pending link rides along, so the sign-in it waits for may end with the second step
    const pending = flow.read(reply.request)
    const link = pending?.step === 'pending_link' ? pending.link : undefined
    flow.write(reply, { step: 'second_factor', mfaToken: challenge.mfaToken, rd, ...(webauthn && { webauthn }), ...(link !== undefined && { link }) }, SECOND_FACTOR_FLOW_AGE)
    return await reply.redirect(`${portal!.publicUrl}/portal/2fa`, 303)
  }

  const flow: PortalSession['flow'] = {
    read: (request) => flowCookie.open(request.cookies[FLOW_COOKIE]),
    write: (reply, step, maxAge) => { reply.setCookie(FLOW_COOKIE, flowCookie.seal(step, maxAge), { ...hostCookie, maxAge }) },
    clear: (reply) => { reply.clearCookie(FLOW_COOKIE, hostCookie) }
  }

  fastify.decorate('portalSession', { context, returnUrl, claims, required, signedIn, secondFactorDue, returnTo, loginUrl, flow })
}, { name: 'portal-session', dependencies: ['config', 'cookies', 'services', 'guard'] })
