import { Type } from '@sinclair/typebox'
import { durationSetting, parseDuration } from './units.js'

/** The bound on a user's sessions and how recent a sign-in must be, spread into the one ConfigSchema (src/config/config.ts). */
export const SessionsSettings = {
  SESSIONS_MAX_PER_USER: Type.Integer({
    default: 100,
    minimum: 1,
    maximum: 10000,
    description: 'live sessions one user may hold: a sign-in beyond it ends that user\'s oldest sessions (revoked like ' +
      'any revocation, audited as `sessions_revoked` with `session_limit`), so a password known to someone else ' +
      'cannot pile up sessions without bound'
  }),
  REAUTH_MAX_AGE: durationSetting('how recent a sign-in must be for the changes that need recent authentication (adding or ' +
    'removing a passkey, creating an API key): older, the request must carry the `password` or sign in again (403 `reauth_required`)', '5m')
}

export interface SessionsConfig {
  /** a sign-in beyond this many live sessions of its user ends the oldest */
  sessionsMaxPerUser: number
  /** seconds: the oldest `auth_time` that counts as recent authentication */
  reauthMaxAge: number
}

export function sessionsConfig (raw: { SESSIONS_MAX_PER_USER: number, REAUTH_MAX_AGE: string }): SessionsConfig {
  return { sessionsMaxPerUser: raw.SESSIONS_MAX_PER_USER, reauthMaxAge: parseDuration(raw.REAUTH_MAX_AGE) }
}
