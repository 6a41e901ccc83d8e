import type { Passkey } from '../../schemas/passkeys.js'
import type { Command, CommandGroup } from './command.js'
import type { CliContext } from './context.js'
import { Failure } from './failure.js'

/** What both commands take: the user whose passkeys they are. */
const BY_USER: Pick<Command, 'options' | 'help' | 'required'> = {
  options: { user: { type: 'string' } },
  help: ['--user <email|id>  the user whose passkeys these are (required)'],
  required: ['user']
}

function passkeyLine (passkey: Passkey): string {
  const synced = passkey.backup_eligible ? (passkey.backed_up ? 'synced' : 'syncable') : 'device-bound'
  return `${passkey.id}  ${passkey.name}  added ${passkey.created_at}  last used ${passkey.last_used_at ?? 'never'}  ${synced}`
}

function passkeysOf (cli: CliContext): NonNullable<CliContext['services']['passkeys']> {
  if (cli.services.passkeys === undefined) throw new Failure('passkeys are off: set ENABLE_PASSKEYS=true (and PUBLIC_URL) as the server has them')
  return cli.services.passkeys
}

/** gatehouse passkeys list|delete --user <email|id> [<id>] */
export const passkeysGroup: CommandGroup = {
  name: 'passkeys',
  commands: {
    list: {
      usage: 'passkeys list --user <email|id>',
      summary: 'list the user\'s passkeys, newest first',
      ...BY_USER,
      async run ({ values }, context) {
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const passkeys = await passkeysOf(cli).list(user.id)
        const text = passkeys.length === 0 ? `${user.email} has no passkey` : passkeys.map(passkeyLine).join('\n')
        return { text, json: { data: passkeys } }
      }
    },
    delete: {
      usage: 'passkeys delete --user <email|id> <id>',
      summary: 'remove one of the user\'s passkeys, even their last way to sign in (as the admin route); no session ends',
      ...BY_USER,
      positionals: ['<id>'],
      async run ({ values, positionals }, context) {
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const id = positionals[0] as string
        await passkeysOf(cli).remove(user.id, id, { actorId: undefined, admin: true }, cli.requester.context)
        return { text: `removed passkey ${id} of ${user.email}`, json: { removed: id } }
      }
    }
  }
}
