import { Type } from '@sinclair/typebox'

/** The settings of access-control denials, spread into the one ConfigSchema (src/config/config.ts). */
export const AuthzSettings = {
  AUTHZ_DENIAL_DETAILS: Type.Boolean({
    default: true,
    description: '`false` leaves `required_roles` out of 403 bodies (the `reason` stays), so callers cannot learn which roles a route needs'
  })
}

export interface AuthzConfig {
  /** 403 `missing_role` bodies name the roles that would have passed */
  authzDenialDetails: boolean
}

export function authzConfig (raw: { AUTHZ_DENIAL_DETAILS: boolean }): AuthzConfig {
  return { authzDenialDetails: raw.AUTHZ_DENIAL_DETAILS }
}
