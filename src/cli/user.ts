import { Role } from '../../schemas/common.js'
import type { Config } from '../config/config.js'
import type { User } from '../db/users.js'
import { paginationMeta } from '../http/pagination.js'
import { OPERATOR } from '../accounts/users.js'
import { ruleFormats } from '../validation/index.js'
import { integerOption, UsageError, type CommandGroup } from './command.js'
import { userRepresentation } from '../http/presenters.js'
import { plural, userLine } from './output.js'
import { readPassword, refuseBreached } from './password.js'
import { importCommand } from './import.js'

/** UserResponse as the API answers it: `kind` only while ENABLE_API_KEYS is on. */
function shown (config: Config, user: User): Omit<ReturnType<typeof userRepresentation>, 'kind'> & { kind?: string } {
  const { kind, ...rest } = userRepresentation(user)
  return config.apiKeys === undefined ? rest : { ...rest, kind }
}

const ROLE = new RegExp(Role.pattern ?? '^$')
const REF = ['<email|id>']

export function rolesOf (values: Record<string, unknown>): string[] | undefined {
  const roles = values.role as string[] | undefined
  const bad = roles?.find((role) => !ROLE.test(role))
  if (bad !== undefined) throw new UsageError(`--role ${bad} is not a role name (lower-case letters, digits, _ and -; at most 32)`)
  return roles === undefined ? undefined : [...new Set(roles)]
}

/** gatehouse user create|list|show|set-password|set-roles|delete */
export const userGroup: CommandGroup = {
  name: 'user',
  commands: {
    create: {
      usage: 'user create --email <email> --name <name> [--role <role>]... [--superuser]',
      summary: 'create a user; the password is read from standard input (one line)',
      options: { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', multiple: true }, superuser: { type: 'boolean', default: false } },
      required: ['email', 'name'],
      help: ['--role <role>  a role to give (repeatable); without any, DEFAULT_ROLES', '--superuser    make the user a superuser'],
      async run ({ values }, context) {
        const email = values.email as string
        // the API's rules, so the command line cannot create an account nobody can sign in to
        const isEmail = ruleFormats.email?.validate
        if (typeof isEmail === 'function' && !isEmail(email.trim())) throw new UsageError('--email must be a valid email address')
        const name = values.name as string
        if (name.trim().length < 2 || name.length > 100) throw new UsageError('--name must be 2 to 100 characters')
        const roles = rolesOf(values)
        const password = await readPassword()
        const cli = await context()
        refuseBreached(cli.services.breachedPasswords, password)
        const user = await cli.services.users.create({
          email, password, name, roles: roles ?? cli.config.defaultRoles, isSuperuser: values.superuser === true
        }, cli.requester)
        return { text: `created user ${user.id} <${user.email}>`, json: shown(cli.config, user) }
      }
    },
    list: {
      usage: 'user list [--page <n>] [--per-page <n>]',
      summary: 'list users, oldest first, a page at a time',
      options: { page: { type: 'string' }, 'per-page': { type: 'string' } },
      help: ['--page <n>      the page (default 1)', '--per-page <n>  users per page, 1 to 100 (default 15)'],
      async run ({ values }, context) {
        const page = integerOption(values.page, 'page', Number.MAX_SAFE_INTEGER, 1)
        const perPage = integerOption(values['per-page'], 'per-page', 100, 15)
        const cli = await context()
        const { users, total } = await cli.services.users.list(page, perPage)
        const meta = paginationMeta(page, perPage, total)
        const text = [...users.map(userLine), `page ${page} of ${Math.max(meta.last_page, 1)}, ${plural(total, 'user')}`].join('\n')
        return { text, json: { data: users.map((u) => shown(cli.config, u)), pagination: meta } }
      }
    },
    show: {
      usage: 'user show <email|id>',
      summary: 'show one user',
      positionals: REF,
      async run ({ positionals }, context) {
        const cli = await context()
        const user = await cli.userOf(positionals[0] ?? '')
        const text = [`id: ${user.id}`, `email: ${user.email}`, `name: ${user.name}`, `age: ${user.age ?? '-'}`, `roles: ${user.roles.join(', ')}`,
          `superuser: ${user.isSuperuser}`, `created: ${user.createdAt}`, `updated: ${user.updatedAt}`].join('\n')
        return { text, json: shown(cli.config, user) }
      }
    },
    'set-password': {
      usage: 'user set-password <email|id>',
      summary: 'set a new password, read from standard input (one line); every session of the user ends',
      positionals: REF,
      async run ({ positionals }, context) {
        const password = await readPassword()
        const cli = await context()
        refuseBreached(cli.services.breachedPasswords, password)
        const user = await cli.userOf(positionals[0] ?? '')
        const revoked = await cli.services.users.setPassword(user.id, password, cli.requester)
        return { text: `password set for ${user.email}; ${plural(revoked, 'session')} revoked`, json: { id: user.id, email: user.email, revoked } }
      }
    },
    'set-roles': {
      usage: 'user set-roles <email|id> --role <role>...',
      summary: 'replace the user\'s roles; a role taken away ends the user\'s sessions',
      positionals: REF,
      options: { role: { type: 'string', multiple: true } },
      required: ['role'],
      help: ['--role <role>  a role the user is to have (repeatable, at least one)'],
      async run ({ values, positionals }, context) {
        const roles = rolesOf(values) ?? []
        const cli = await context()
        const user = await cli.userOf(positionals[0] ?? '')
        const updated = await cli.services.users.update(user.id, { roles }, OPERATOR, cli.requester.context)
        return { text: `roles of ${updated.email}: ${updated.roles.join(', ')}`, json: shown(cli.config, updated) }
      }
    },
    delete: {
      usage: 'user delete <email|id>',
      summary: 'delete the user and end their sessions',
      positionals: REF,
      async run ({ positionals }, context) {
        const cli = await context()
        const user = await cli.userOf(positionals[0] ?? '')
        await cli.services.users.delete(user.id, OPERATOR, cli.requester.context)
        return { text: `deleted user ${user.id} <${user.email}>`, json: { deleted: user.id } }
      }
    },
    import: importCommand
  }
}
