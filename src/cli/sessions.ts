import type { Command, CommandGroup } from './command.js'
import { sessionRepresentation } from '../http/presenters.js'
import { plural, sessionLine } from './output.js'

/** What both commands take: the user whose sessions they are. */
const BY_USER: Pick<Command, 'options' | 'help' | 'required'> = {
  options: { user: { type: 'string' } },
  help: ['--user <email|id>  the user whose sessions these are (required)'],
  required: ['user']
}

/** gatehouse sessions list|revoke --user <email|id> */
export const sessionsGroup: CommandGroup = {
  name: 'sessions',
  commands: {
    list: {
      usage: 'sessions list --user <email|id>',
      summary: 'list the user\'s live sessions, newest first (never a token)',
      ...BY_USER,
      async run ({ values }, context) {
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const sessions = await cli.services.sessions.list(user.id)
        const text = sessions.length === 0 ? `${user.email} has no live session` : sessions.map(sessionLine).join('\n')
        return { text, json: { data: sessions.map((s) => sessionRepresentation(s)) } }
      }
    },
    revoke: {
      usage: 'sessions revoke --user <email|id>',
      summary: 'end every session of the user (running servers refuse their tokens within a second)',
      ...BY_USER,
      async run ({ values }, context) {
        const cli = await context()
        const user = await cli.userOf(values.user as string)
        const revoked = await cli.services.sessions.revoke({ userId: user.id }, { reason: 'admin_revoked' }, cli.requester.context)
        return { text: `revoked ${plural(revoked, 'session')} of ${user.email}`, json: { revoked } }
      }
    }
  }
}
