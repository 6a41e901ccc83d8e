import { Type, type Static, type TObject } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'

const RoleList = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}(,[a-z][a-z0-9_-]{0,31})*$', maxLength: 1024 })

/** Who may have an account and how its password is kept, spread into the one ConfigSchema (src/config/config.ts). */
export const AccountSettings = {
  ENABLE_REGISTER: Type.Boolean({ default: false, description: '`true` enables `POST /auth/register`' }),
  ADMIN_EMAIL: Type.Optional(Type.String({
    pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
    maxLength: 254,
    examples: ['admin@example.com'],
    description: 'with `ADMIN_PASSWORD`: a superuser (roles `admin`, name `Administrator`) with this email is created ' +
      'at start when missing — exactly one, even when several processes start at once. An address an ordinary account ' +
      'already holds is never promoted: the start creates no superuser and logs a warning'
  })),
  ADMIN_PASSWORD: Type.Optional(Type.String({
    minLength: 8,
    maxLength: 1024,
    description: 'the password of the `ADMIN_EMAIL` superuser; required when `ADMIN_EMAIL` is set'
  })),
  DEFAULT_ROLES: Type.String({ ...RoleList, default: 'user', description: 'comma-separated roles given to new users' }),
  ARGON2_MEMORY_COST: Type.Integer({
    default: 19456,
    minimum: 8,
    maximum: 4194304,
    description: 'argon2id memory in KiB (OWASP\'s minimum is 19 MiB); lower values weaken every stored hash'
  }),
  ARGON2_TIME_COST: Type.Integer({ default: 2, minimum: 1, maximum: 100, description: 'argon2id iterations (OWASP\'s minimum: 2)' }),
  ARGON2_PARALLELISM: Type.Integer({ default: 1, minimum: 1, maximum: 16, description: 'argon2id lanes (OWASP\'s minimum: 1)' })
}

export interface AccountConfig {
  enableRegister: boolean
  admin: { email: string, password: string } | undefined
  defaultRoles: string[]
  argon2: { memoryCost: number, timeCost: number, parallelism: number }
}

export function accountConfig (raw: Static<TObject<typeof AccountSettings>>): AccountConfig {
  if (raw.ADMIN_EMAIL !== undefined && raw.ADMIN_PASSWORD === undefined) {
    throw new ConfigError('Invalid configuration: ADMIN_PASSWORD is required when ADMIN_EMAIL is set')
  }
  return {
    enableRegister: raw.ENABLE_REGISTER,
    admin: raw.ADMIN_EMAIL && raw.ADMIN_PASSWORD ? { email: raw.ADMIN_EMAIL, password: raw.ADMIN_PASSWORD } : undefined,
    defaultRoles: raw.DEFAULT_ROLES.split(','),
    argon2: { memoryCost: raw.ARGON2_MEMORY_COST, timeCost: raw.ARGON2_TIME_COST, parallelism: raw.ARGON2_PARALLELISM }
  }
}
