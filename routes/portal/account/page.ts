import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { PageView } from '../../../plugins/portal.js'
import { hasPassword } from '../../../src/accounts/credentials.js'
import { TokenRevoked } from '../../../src/errors.js'
import { assetPath } from '../../../src/portal/files.js'
import type { Claims } from '../../../src/tokens/claims.js'

/** What each action's success says on the page it leads to. */
export const DONE: Readonly<Record<string, string>> = {
  'revoke-session': 'The session was signed out.',
  'revoke-others': 'Every other session was signed out.',
  'change-password': 'Your password was changed. Every other session was signed out.',
  'totp-enrol': 'Scan the QR code with your authenticator app (or type the key), then enter the code it shows.',
  'totp-confirm': 'Two-factor sign-in is on. Every other session was signed out.',
  'totp-disable': 'Two-factor sign-in is off.',
  'recovery-codes': 'New recovery codes were made; the old ones no longer work.',
  'passkey-add': 'The passkey was added. You can sign in with it now.',
  'passkey-rename': 'The passkey was renamed.',
  'passkey-remove': 'The passkey was removed. It no longer signs you in.',
  'revoke-app': 'The application may no longer use your account; its sessions were signed out.',
  'identity-remove': 'The account was disconnected. It no longer signs you in.'
}

/** Which field a failed action's error belongs beside (a 422 names its own fields). */
const ERROR_FIELDS: Readonly<Record<string, Record<string, string>>> = {
  'change-password': { invalid_password: 'current_password' },
  'totp-enrol': { invalid_password: 'password' },
  'totp-confirm': { invalid_otp: 'code' },
  'totp-disable': { invalid_password: 'password', invalid_otp: 'code' },
  'recovery-codes': { invalid_password: 'password', invalid_otp: 'code' },
  'passkey-remove': { invalid_password: 'passkey-remove-password' }
}

export interface AccountState {
  /** the action whose failure the page shows */
  failed?: string
  notice?: string
  /** shown this once: the answer to the action that made them */
  recoveryCodes?: string[]
}

const when = (iso: string): { iso: string, text: string } => ({ iso, text: `${iso.slice(0, 16).replace('T', ' ')} UTC` })

/**
 * The account page's passkeys section (src/portal/templates/partials/passkeys.eta): the list, and
 * whether the sign-in is recent enough to add or remove one without the password
 * (docs/passkeys.md#recent-authentication), and the script that adds one; nothing while passkeys are off.
 */
function passkeysSection (fastify: FastifyInstance): (claims: Claims) => Promise<{ passkeys?: Record<string, unknown>, scripts?: string[] }> {
  const { passkeys, recentAuth } = fastify.services
  const publicUrl = fastify.config.portal?.publicUrl ?? ''
  const reauthUrl = `${publicUrl}/portal/login?prompt=login&rd=${encodeURIComponent(`${publicUrl}/portal/account`)}`
  const scripts = [assetPath(`${publicUrl}/portal`, 'passkeys.js')]
  return async (claims) => {
    if (passkeys === undefined) return {}
    const list = (await passkeys.list(claims.user_id)).map((p) => ({
      id: p.id, name: p.name, created: when(p.created_at), lastUsed: p.last_used_at === null ? undefined : when(p.last_used_at), synced: p.backed_up
    }))
    return { passkeys: { list, recent: recentAuth.isRecent(claims), reauthUrl, optionsUrl: `${publicUrl}/auth/passkeys/register/options` }, scripts }
  }
}

/**
 * The account page's connected accounts (src/portal/templates/partials/identities.eta): the linked
 * identities with a form each to disconnect it, a link to connect each ready provider not linked yet, and
 * whether the sign-in is recent enough to disconnect without the password; nothing while ENABLE_IDP_LOGIN is off.
 */
function identitiesSection (fastify: FastifyInstance): (request: FastifyRequest, claims: Claims, state: AccountState) => Promise<{ identities?: Record<string, unknown> }> {
  const { identities, recentAuth, passkeys, idp } = fastify.services
  const publicUrl = fastify.config.portal?.publicUrl ?? ''
  const account = encodeURIComponent(`${publicUrl}/portal/account`)
  const remedy = passkeys === undefined ? 'Connect another account first.' : 'Add a passkey or connect another account first.'
  return async (request, claims, state) => {
    if (identities === undefined) return {}
    const linked = await identities.list(claims.user_id)
    const list = linked.map((i) => ({ id: i.id, name: i.display_name, email: i.email, linked: when(i.created_at) }))
    // as the sign-in page: only the providers a sign-in can start with now (discovered)
    const connect = (idp?.upstreams.visible() ?? []).filter((p) => !linked.some((i) => i.provider === p.id))
      .map((p) => ({ name: p.displayName, href: `${publicUrl}/auth/idp/${p.id}/start?intent=link&rd=${account}` }))
    // the row whose form failed shows the error beside its own fields
    const failedId = state.failed === 'identity-remove' ? (request.body as { identity?: unknown } | undefined)?.identity : undefined
    return { identities: { list, connect, failedId, remedy, recent: recentAuth.isRecent(claims), reauthUrl: `${publicUrl}/portal/login?prompt=login&rd=${account}` } }
  }
}

/**
 * The account page of the signed-in user (request.claims: portalSession.required ran): who they
 * are, their sessions, their password, their second factor. The same page, with the error, is
 * what a failed action shows.
 */
export function accountPage (fastify: FastifyInstance): (request: FastifyRequest, state?: AccountState) => Promise<PageView> {
  const { users, sessions, twoFactor, oidc } = fastify.services
  const passkeys = passkeysSection(fastify)
  const resetUrl = fastify.config.passwordReset === undefined ? undefined : `${fastify.config.portal?.publicUrl ?? ''}/portal/forgot`
  const identities = identitiesSection(fastify)

  async function totpState (userId: string): Promise<Record<string, unknown>> {
    if (twoFactor === undefined) return { totp: undefined }
    if (await twoFactor.isEnabled(userId)) return { totp: { state: 'active' } }
    const pending = await twoFactor.pendingEnrolment(userId)
    return { totp: pending === undefined ? { state: 'off' } : { state: 'pending', secret: pending.secret } }
  }

  return async function page (request, state = {}) {
    const claims = request.claims as Claims
    const user = await users.findById(claims.user_id)
    if (user === undefined) throw new TokenRevoked()
    const list = (await sessions.list(user.id)).map((s) => ({
      id: s.id, created: when(s.createdAt), lastUsed: when(s.lastUsedAt), address: s.ip ?? 'unknown', userAgent: s.userAgent ?? 'unknown', current: s.id === claims.session_id
    }))
    return {
      template: 'account',
      heading: 'Your account',
      wide: true,
      user: { name: user.name, email: user.email },
      // without one the change form could only fail
      password: { set: hasPassword(user), resetUrl },
      sessions: list,
      ...await totpState(user.id),
      ...await passkeys(claims),
      ...await identities(request, claims, state),
      failed: state.failed,
      apps: oidc === undefined
        ? undefined
        : (await oidc.grants.list(user.id)).map((g) => ({ clientId: g.client_id, name: g.client_name, scopes: g.scopes.join(' '), granted: when(g.granted_at) })),
      notice: state.notice,
      recoveryCodes: state.recoveryCodes,
      errorFields: state.failed === undefined ? {} : ERROR_FIELDS[state.failed] ?? {},
      links: [{ href: `${fastify.config.portal?.publicUrl ?? ''}/portal/logout`, text: 'Sign out' }]
    }
  }
}
