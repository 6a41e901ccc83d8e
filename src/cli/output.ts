import type { User } from '../db/users.js'
import type { SessionView } from '../sessions/session-service.js'

/** A user on one line: id, email, name, roles, superuser. */
export function userLine (user: User): string {
  return `${user.id}  ${user.email}  ${user.name}  [${user.roles.join(',')}]${user.isSuperuser ? '  superuser' : ''}`
}

export function sessionLine (session: SessionView): string {
  return `${session.id}  signed in ${session.createdAt}  last used ${session.lastUsedAt}  ${session.ip ?? '-'}  ${session.aal}  ${session.userAgent ?? '-'}`
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
