import { DURATION_PATTERN, parseDuration } from '../config/units.js'
import type { ApiKey } from '../db/api-keys.js'
import { apiKeyRepresentation, userRepresentation } from '../http/presenters.js'
import { UsageError, type CommandGroup } from './command.js'
import type { CliContext } from './context.js'
import { Failure } from './failure.js'
import { plural } from './output.js'
import { rolesOf } from './user.js'

/** The API key services, or a Failure naming the switch (docs/api-keys.md). */
function apiKeysOf (cli: CliContext) {
  const apiKeys = cli.services.apiKeys
  if (apiKeys === undefined) throw new Failure('API keys are off: set ENABLE_API_KEYS=true')
  return apiKeys.service
}

function nameOf (value: unknown, min: number): string {
  const name = value as string
  if (name.trim().length < min || name.length > 100) throw new UsageError(`--name must be ${min} to 100 characters`)
  return name
}

const keyLine = (key: ApiKey) => `${key.id}  ${key.name}  [${key.roles.join(',')}]  expires ${key.expiresAt}  last used ${key.lastUsedAt ?? 'never'}`

/** gatehouse service-account create */
export const serviceAccountGroup: CommandGroup = {
  name: 'service-account',
  commands: {
    create: {
      usage: 'service-account create --name <name> [--role <role>]...',
      summary: 'create a service account: a user with no password and no sign-in, for API keys',
      options: { name: { type: 'string' }, role: { type: 'string', multiple: true } },
      required: ['name'],
      help: ['--name <name>  2 to 100 characters; the account\'s email is made from it', '--role <role>  a role to give (repeatable); without any, DEFAULT_ROLES'],
      async run ({ values }, context) {
        const name = nameOf(values.name, 2)
        const roles = rolesOf(values)
        const cli = await context()
        const user = await apiKeysOf(cli).createServiceAccount(name, roles, cli.requester)
        return { text: `created service account ${user.id} <${user.email}>`, json: userRepresentation(user) }
      }
    }
  }
}

/** gatehouse api-key create|list|revoke */
export const apiKeyGroup: CommandGroup = {
  name: 'api-key',
  commands: {
    create: {
      usage: 'api-key create --user <email|id> --name <name> [--role <role>]... [--expires-in <duration>]',
      summary: 'create an API key for a service account; the key is printed this once',
      options: { user: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', multiple: true }, 'expires-in': { type: 'string' } },
      required: ['user', 'name'],
      help: [
        '--user <email|id>         the service account',
        '--name <name>             1 to 100 characters',
        '--role <role>             a role of the account the key holds (repeatable); without any, all of them',
        '--expires-in <duration>   e.g. 30d; at most API_KEY_MAX_TTL (the default)'
      ],
      fieldOptions: { expires_at: '--expires-in' },
      async run ({ values }, context) {
        const name = nameOf(values.name, 1)
        const roles = rolesOf(values)
        const expiresIn = values['expires-in'] as string | undefined
        if (expiresIn !== undefined && !new RegExp(DURATION_PATTERN).test(expiresIn)) throw new UsageError('--expires-in is a duration: seconds, or a number with s, m, h or d')
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const expiresAt = expiresIn === undefined ? undefined : new Date(Date.now() + parseDuration(expiresIn) * 1000).toISOString()
        const { key, secret } = await apiKeysOf(cli).createFor(user.id, { name, roles, expiresAt }, cli.requester)
        const text = `created API key ${key.id} for ${user.email} [${key.roles.join(',')}], expires ${key.expiresAt}; shown this once:\n${secret}`
        return { text, json: { ...apiKeyRepresentation(key), key: secret } }
      }
    },
    list: {
      usage: 'api-key list --user <email|id>',
      summary: 'list the user\'s live API keys, newest first (never a key)',
      options: { user: { type: 'string' } },
      required: ['user'],
      help: ['--user <email|id>  the user whose keys these are'],
      async run ({ values }, context) {
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const keys = await apiKeysOf(cli).list(user.id)
        const text = keys.length === 0 ? `${user.email} has no live API key` : [...keys.map(keyLine), plural(keys.length, 'key')].join('\n')
        return { text, json: { data: keys.map(apiKeyRepresentation) } }
      }
    },
    revoke: {
      usage: 'api-key revoke <id>',
      summary: 'revoke an API key (running servers refuse it within a second)',
      positionals: ['<id>'],
      async run ({ positionals }, context) {
        const id = positionals[0] ?? ''
        if (!/^[0-9a-z]{12}$/.test(id)) throw new UsageError('<id> is an API key\'s id: 12 lower-case letters and digits')
        const cli = await context()
        await apiKeysOf(cli).revoke(id, undefined, 'revoked_by_operator', cli.requester)
        return { text: `revoked API key ${id}`, json: { revoked: id } }
      }
    }
  }
}
