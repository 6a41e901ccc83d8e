import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { CliContext } from './context.js'

/** A bad or missing argument: exit 2, with the command's usage line on stderr. */
export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>

export interface Input {
  values: Record<string, string | boolean | Array<string | boolean> | undefined>
  positionals: string[]
}

/**
 * What a command prints: a line or a few for people, a value for `--json`. A command that ran
 * but refused part of its input (an import's lines) lists them on stderr and exits 1.
 */
export interface Output { text: string, json: unknown, refusals?: string, exitCode?: 1 }

export interface Command {
  /** after `gatehouse `, e.g. `user show <email|id>` */
  usage: string
  summary: string
  options?: Options
  /** the positional arguments, each required, by the names the usage gives them */
  positionals?: string[]
  /** options that must be given (with a value) */
  required?: string[]
  /** what --help adds under the usage, one line per option */
  help?: string[]
  /** the option behind a field of the service's request, named in a refusal of that field (`expires_at` → `--expires-in`) */
  fieldOptions?: Record<string, string>
  run (input: Input, context: () => Promise<CliContext>): Promise<Output>
}

/**
 * A command group, one file each (src/cli/user.ts, …), registered in src/cli/main.ts. A group
 * with a single command and no subcommand (`migrate`) names it `''`.
 */
export interface CommandGroup {
  name: string
  commands: Record<string, Command>
}

/** Options every command takes. */
const COMMON: Options = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false }
}

/** parseArgs, strict: an unknown option, a missing value or a stray argument is a UsageError. */
export function parseInput (command: Command, args: string[]): Input & { json: boolean, help: boolean } {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...command.options, ...COMMON }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n', 1)[0] ?? 'bad arguments')
  }
  const { values, positionals } = parsed
  const help = values.help === true
  const expected = command.positionals ?? []
  if (!help && positionals.length < expected.length) throw new UsageError(`missing ${expected.slice(positionals.length).join(' ')}`)
  for (const name of help ? [] : command.required ?? []) {
    const value = values[name]
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) throw new UsageError(`--${name} is required`)
  }
  if (!help && positionals.length > expected.length) throw new UsageError(`unexpected argument: ${positionals[expected.length] ?? ''}`)
  return { values, positionals, json: values.json === true, help }
}

export function helpOf (command: Command): string {
  const lines = [`usage: gatehouse ${command.usage}`, `  ${command.summary}`, ...(command.help ?? []).map((line) => `  ${line}`), '  --json     print machine-readable JSON', '  --help     print this help']
  return lines.join('\n') + '\n'
}

/** A positive integer option, else a UsageError naming it. */
export function integerOption (value: unknown, name: string, max: number, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || n < 1 || n > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}`)
  return n
}
