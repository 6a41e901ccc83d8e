import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { PageView } from '../../../plugins/portal.js'
import { TokenRevoked } from '../../../src/errors.js'
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
  'revoke-app': 'The application may no longer use your account; its sessions were signed out.'
}

/** Which field a failed action's error belongs beside (a 422 names its own fields). */
const ERROR_FIELDS: Readonly<Record<string, Record<string, string>>> = {
  'change-password': { invalid_password: 'current_password' },
  'totp-enrol': { invalid_password: 'password' },
  'totp-confirm': { invalid_otp: 'code' },
  'totp-disable': { invalid_password: 'password', invalid_otp: 'code' },
  'recovery-codes': { invalid_password: 'password', invalid_otp: 'code' }
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
 * The account page of the signed-in user (request.claims: portalSession.required ran): who they
 * are, their sessions, their password, their second factor. The same page, with the error, is
 * what a failed action shows.
 */
export function accountPage (fastify: FastifyInstance): (request: FastifyRequest, state?: AccountState) => Promise<PageView> {
  const { users, sessions, twoFactor, oidc } = fastify.services

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
      sessions: list,
      ...await totpState(user.id),
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
