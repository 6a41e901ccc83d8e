import { CatalogueError } from '../errors.js'
import { ConfigError } from '../errors.js'
import { helpOf, parseInput, UsageError, type Command, type CommandGroup } from './command.js'
import { Failure } from './failure.js'
import { CliSession, oneLine } from './context.js'
import { apiKeyGroup, serviceAccountGroup } from './api-keys.js'
import { keysGroup } from './keys.js'
import { mailGroup } from './mail.js'
import { migrateGroup } from './migrate.js'
import { passwordsGroup } from './passwords.js'
import { oidcClientGroup } from './oidc-client.js'
import { sessionsGroup } from './sessions.js'
import { passkeysGroup } from './passkeys.js'
import { userGroup } from './user.js'

/** Every command group; a new one is a file of its own and a line here. */
const GROUPS: CommandGroup[] = [migrateGroup, userGroup, sessionsGroup, passkeysGroup, keysGroup, mailGroup, passwordsGroup, serviceAccountGroup, apiKeyGroup, oidcClientGroup]

function usageOf (groups: CommandGroup[]): string {
  const lines = groups.flatMap((group) => Object.values(group.commands).map((c) => `  gatehouse ${c.usage}\n      ${c.summary}`))
  return `Usage:\n${lines.join('\n')}\n\nEvery command takes --json (machine-readable output) and --help.\n`
}

interface Io { out (text: string): void, err (text: string): void }

const STDIO: Io = { out: (text) => { process.stdout.write(text) }, err: (text) => { process.stderr.write(text) } }

/** Finds the command argv names: a group, then (unless the group has only one) its subcommand. */
function commandOf (argv: string[]): { group: CommandGroup, command: Command | undefined, args: string[] } | undefined {
  const [name, sub, ...rest] = argv
  const group = GROUPS.find((g) => g.name === name)
  if (group === undefined) return undefined
  const single = group.commands['']
  if (single !== undefined) return { group, command: single, args: argv.slice(1) }
  return { group, command: sub === undefined ? undefined : group.commands[sub], args: rest }
}

/**
 * Runs one command: exit 0 with its output, 2 for a bad or missing argument (a usage line on
 * stderr), 1 for a failed operation (one line naming what failed).
 */
export async function main (argv: string[], io: Io = STDIO): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h') {
    io.out(usageOf(GROUPS))
    return 0
  }
  const found = commandOf(argv)
  if (found?.command === undefined) {
    const groupHelp = found !== undefined && (argv[1] === '--help' || argv[1] === '-h')
    if (groupHelp) {
      io.out(usageOf([found.group]))
      return 0
    }
    io.err(found === undefined ? usageOf(GROUPS) : `gatehouse: ${argv[1] === undefined ? 'missing' : `unknown command ${argv[1]},`} a ${found.group.name} command\n${usageOf([found.group])}`)
    return 2
  }
  const { command, args } = found
  const session = new CliSession()
  try {
    const input = parseInput(command, args)
    if (input.help) {
      io.out(helpOf(command))
      return 0
    }
    const output = await command.run(input, session.context)
    if (output.refusals !== undefined && !input.json) io.err(output.refusals + '\n')
    io.out((input.json ? JSON.stringify(output.json) : output.text) + '\n')
    return output.exitCode ?? 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`gatehouse: ${err.message}\nusage: gatehouse ${command.usage}\n`)
      return 2
    }
    // a refused value (email taken, not found), a bad setting, a database that fails
    const expected = err instanceof Failure || err instanceof CatalogueError || err instanceof ConfigError
    io.err(`gatehouse: ${expected ? oneLine(err, command.fieldOptions) : `failed: ${oneLine(err)}`}\n`)
    return 1
  } finally {
    await session.close().catch((err: unknown) => { io.err(`gatehouse: closing the database failed: ${oneLine(err)}\n`) })
  }
}
