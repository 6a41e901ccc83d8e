import type { User } from '../db/users.js'
import type { SessionView } from '../sessions.js'

/** A user as `--json` prints it: the API's UserResponse. */
export function userJson (user: User) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    age: user.age,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    roles: user.roles,
    is_superuser: user.isSuperuser,
    email_verified: user.emailVerified
  }
}

/** A user on one line: id, email, name, roles, superuser. */
export function userLine (user: User): string {
  return `${user.id}  ${user.email}  ${user.name}  [${user.roles.join(',')}]${user.isSuperuser ? '  superuser' : ''}`
}

/** A session as `--json` prints it: the API's Session (never a token; `current` is always false here). */
export function sessionJson (session: SessionView) {
  return {
    id: session.id,
    current: false,
    created_at: session.createdAt,
    last_used_at: session.lastUsedAt,
    expires_at: session.expiresAt,
    ip: session.ip,
    user_agent: session.userAgent,
    aal: session.aal,
    amr: session.amr
  }
}

export function sessionLine (session: SessionView): string {
  return `${session.id}  signed in ${session.createdAt}  last used ${session.lastUsedAt}  ${session.ip ?? '-'}  ${session.aal}  ${session.userAgent ?? '-'}`
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
