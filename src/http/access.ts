import type { User } from '../db/users.js'
import { Forbidden, NotFound } from '../errors.js'
import type { Claims } from '../tokens/claims.js'

/** What a route declares about who may call it (docs/api.md#access-control). */
export interface RouteAccess {
  /** any one of these roles passes */
  roles?: string[]
  /** the route param naming a user id; that user passes for themself */
  self?: string
  /** only a superuser passes (403 `superuser_required`) */
  superuser?: true
}

/**
 * The claims check, read from the route's declared access alone: undefined when the claims pass,
 * else the refusal saying why (a role missing, or the user named in the path is someone else).
 */
export function denialFor (claims: Claims, access: RouteAccess | undefined, params: unknown): Forbidden | undefined {
  if (claims.is_superuser || access === undefined) return undefined
  if (access.superuser === true) return new Forbidden('superuser_required')
  if (access.self !== undefined && (params as Record<string, unknown>)[access.self] === claims.user_id) return undefined
  if (access.roles?.some((role) => claims.roles.includes(role)) === true) return undefined
  // "admin or the user themself", called by a user who is neither: about someone else
  if (access.self !== undefined) return new Forbidden('not_owner')
  return access.roles === undefined ? undefined : new Forbidden('missing_role', access.roles)
}

/** The route's declared access in words, for its OpenAPI description (the same declaration the guard reads). */
export function describeAccess (access: RouteAccess | undefined): string {
  if (access === undefined) return 'Access: any signed-in user.'
  if (access.superuser === true) return 'Access: a superuser (403 `superuser_required` otherwise).'
  const roles = access.roles === undefined ? undefined : `the role${access.roles.length > 1 ? 's' : ''} ${access.roles.map((r) => `\`${r}\``).join(' or ')}`
  if (access.self === undefined) return `Access: ${roles ?? 'any signed-in user'} (403 \`missing_role\` otherwise), or a superuser.`
  return `Access: the user named by \`${access.self}\` themself${roles === undefined ? '' : `, ${roles}`} or a superuser (403 \`not_owner\` otherwise).`
}

/**
 * The user an admin route names (/api/users/:id/…), once the caller may act on them: unknown → 404;
 * a superuser's account is for a superuser only (403 `superuser_required`), so an admin cannot
 * take a way in to an account above their own.
 */
export function adminTarget (user: User | undefined, caller: Claims): User {
  if (user === undefined) throw new NotFound('User not found')
  if (user.isSuperuser && !caller.is_superuser) throw new Forbidden('superuser_required')
  return user
}
