import { Type } from '@sinclair/typebox'

/** The bound on a user's sessions, spread into the one ConfigSchema (src/config/config.ts). */
export const SessionsSettings = {
  SESSIONS_MAX_PER_USER: Type.Integer({
    default: 100,
    minimum: 1,
    maximum: 10000,
    description: 'live sessions one user may hold: a sign-in beyond it ends that user\'s oldest sessions (revoked like ' +
      'any revocation, audited as `sessions_revoked` with `session_limit`), so a password known to someone else ' +
      'cannot pile up sessions without bound'
  })
}

export interface SessionsConfig {
  /** a sign-in beyond this many live sessions of its user ends the oldest */
  sessionsMaxPerUser: number
}

export function sessionsConfig (raw: { SESSIONS_MAX_PER_USER: number }): SessionsConfig {
  return { sessionsMaxPerUser: raw.SESSIONS_MAX_PER_USER }
}
