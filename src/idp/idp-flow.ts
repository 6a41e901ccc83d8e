import * as client from 'openid-client'
import type { IdpProvider } from '../config/idp.js'
import type { Store } from '../db/store.js'
import { DomainNotAllowed, IdentityInUse, IdpError, LinkRefused, SignupDisabled } from '../errors.js'
import type { AuditSink, RequestContext } from '../events.js'
import { csrfMatches } from '../portal/csrf.js'
import type { PendingLink } from '../portal/flow.js'
import { decide, type Decision, type Refusal } from './decision.js'
import type { IdpAccounts, SignedIn } from './idp-accounts.js'
import type { UpstreamIdentity } from './identity.js'
import type { IdpState } from './state-cookie.js'
import { CallbackRefused } from './upstream-errors.js'
import type { Upstreams } from './upstreams.js'

/** seconds a pending link waits for the local sign-in */
export const PENDING_LINK_AGE = 600

/** What a callback leads to, for the route to answer (docs/identity-providers.md#how-a-sign-in-through-a-provider-goes). */
export type CallbackOutcome =
  | SignedIn
  | { status: 'linked' }
  | { status: 'pending_link', link: PendingLink }

export interface Callback {
  provider: IdpProvider
  /** the opened `__Host-gh_idp` cookie; undefined when absent, forged or past its ten minutes */
  flow: IdpState | undefined
  query: Record<string, unknown>
  /** the callback's URL: PUBLIC_URL's redirect_uri with the query as the browser sent it */
  url: URL
  /** the user of the browser's portal session now, if any */
  sessionUserId: string | undefined
  context: RequestContext
}

/** The page an upstream `error` shows: the provider did not sign the user in (`access_denied`: the user said no); `upstreamCode` tells them apart. */
export class UpstreamError extends IdpError {
  constructor (readonly upstreamCode: string) {
    super()
  }
}

const REFUSALS: Record<Refusal, new () => Error> = {
  domain_not_allowed: DomainNotAllowed,
  identity_in_use: IdentityInUse,
  link_refused: LinkRefused,
  signup_disabled: SignupDisabled
}

/**
 * link_refused for an upstream email the provider does not vouch for: its page says to sign in and
 * connect from the account page. (Told apart by `unverified`: @fastify/error's `instanceof` matches
 * any error of the same code.)
 */
export class UnverifiedLinkRefused extends LinkRefused {
  readonly unverified = true
}

/** Sign-in through a provider, start to finish: the start's redirect, and the callback's checks (§16.1 of the contract, in order) and decision. */
export class IdpFlow {
  constructor (private readonly options: { upstreams: Upstreams, accounts: IdpAccounts, store: Store, audit: AuditSink }) {}

  /** The provider's authorization URL and the state its callback needs back (sealed in `__Host-gh_idp` by the route). */
  async begin (provider: IdpProvider, request: Pick<IdpState, 'rd' | 'intent' | 'userId'>): Promise<{ url: string, flow: IdpState }> {
    const upstream = this.options.upstreams.upstream(provider.id)
    const flow: IdpState = {
      provider: provider.id,
      state: client.randomState(),
      verifier: client.randomPKCECodeVerifier(),
      nonce: provider.type === 'oidc' ? client.randomNonce() : undefined,
      ...request
    }
    const url = upstream.authorizationUrl({ state: flow.state, codeChallenge: await client.calculatePKCECodeChallenge(flow.verifier), nonce: flow.nonce })
    return { url, flow }
  }

  async callback ({ provider, flow, query, url, sessionUserId, context }: Callback): Promise<CallbackOutcome> {
    if (flow === undefined) throw new CallbackRefused('no __Host-gh_idp cookie, or an expired or forged one (another browser, or a callback used twice)')
    if (flow.provider !== provider.id) throw new CallbackRefused(`the cookie is for provider ${flow.provider}`)
    if (!csrfMatches(query.state, flow.state)) throw new CallbackRefused('state is not the cookie\'s')
    if (query.error !== undefined) throw new UpstreamError(typeof query.error === 'string' ? query.error : 'invalid')
    // a link is for the user who started it, still signed in in this browser
    if (flow.intent === 'link' && sessionUserId !== flow.userId) throw new CallbackRefused('the browser\'s portal session is no longer the user who started the link')
    const identity = await this.options.upstreams.upstream(provider.id).complete(url, flow)
    const decision = await this.decision(provider, identity, flow)
    return await this.act(provider, identity, decision, context)
  }

  private async decision (provider: IdpProvider, identity: UpstreamIdentity, flow: IdpState): Promise<Decision> {
    const { store } = this.options
    const linked = await store.identities.findBySubject(provider.id, identity.subject)
    const local = linked === undefined && identity.email !== undefined ? await store.users.findByEmail(identity.email) : undefined
    return decide({ provider, identity, flow, linked, local })
  }

  private async act (provider: IdpProvider, identity: UpstreamIdentity, decision: Decision, context: RequestContext): Promise<CallbackOutcome> {
    const { accounts } = this.options
    const link = { provider: provider.id, subject: identity.subject, email: identity.email ?? '' }
    switch (decision.kind) {
      case 'sign_in':
        return await accounts.signIn(provider, identity, await accounts.linkedUser(decision.identity.id, decision.identity.userId, identity.email), context)
      case 'link':
        await accounts.link(decision.userId, link, 'idp_linked', context)
        return { status: 'linked' }
      case 'already_linked':
        return { status: 'linked' }
      case 'auto_link':
        await accounts.link(decision.user.id, link, 'idp_auto_linked', context)
        return await accounts.signIn(provider, identity, decision.user, context)
      case 'pending_link':
        return { status: 'pending_link', link: { ...link, userId: decision.user.id, expiresAt: Math.floor(Date.now() / 1000) + PENDING_LINK_AGE } }
      case 'sign_up':
        return { status: 'signed_in', pair: await accounts.signUp(provider, { ...identity, email: decision.email }, context) }
      case 'refused':
        this.refuse(provider, identity, decision, context)
    }
  }

  private refuse (provider: IdpProvider, identity: UpstreamIdentity, { refusal, user }: Extract<Decision, { kind: 'refused' }>, context: RequestContext): never {
    const event = refusal === 'domain_not_allowed' ? 'login_failed' : 'idp_link_refused'
    this.options.audit({ event, outcome: 'failure', userId: user?.id, email: identity.email, detail: `idp:${provider.id} ${refusal}` }, context)
    // an email match refused for want of the provider's word on the email (the first check of an email match)
    const unverified = refusal === 'link_refused' && !identity.emailVerified
    throw unverified ? new UnverifiedLinkRefused() : new REFUSALS[refusal]()
  }
}
