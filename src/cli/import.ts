import { readFile } from 'node:fs/promises'
import { UnreadableLine } from '../imports/lines.js'
import type { LineResult } from '../imports/import-service.js'
import type { Command } from './command.js'
import { Failure } from './failure.js'
import { oneLine } from './context.js'
import { plural } from './output.js'

interface FileLines { users: unknown[], lineNumbers: number[] }

/** One JSON object per line; blank lines are skipped, and a refused line is named by its number in the file. */
async function readLines (path: string): Promise<FileLines> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new Failure(`cannot read ${path}: ${oneLine(err)}`)
  }
  const users: unknown[] = []
  const lineNumbers: number[] = []
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '')
    if (line.trim() === '') return
    lineNumbers.push(i + 1)
    try {
      users.push(JSON.parse(line))
    } catch (err) {
      users.push(new UnreadableLine((err as Error).message))
    }
  })
  if (users.length === 0) throw new Failure(`${path} holds no users`)
  return { users, lineNumbers }
}

type FileResult = { line: number, id: string } | { line: number, errors: Record<string, string[]> }

/** `gatehouse user import`: exit 0 when every line is (or would be) imported, 1 when any is refused. */
export const importCommand: Command = {
  usage: 'user import --file <users.jsonl> [--dry-run] [--partial]',
  summary: 'import users with their existing password hashes, one JSON object per line (docs/migrating.md)',
  options: { file: { type: 'string' }, 'dry-run': { type: 'boolean', default: false }, partial: { type: 'boolean', default: false } },
  required: ['file'],
  help: [
    '--file <path>  one ImportUser per line: email, name, password_hash or password, …',
    '--dry-run      check every line and answer as the import would, writing nothing',
    '--partial      import the valid lines (one transaction per 1000) and report the others'
  ],
  async run ({ values }, context) {
    const { users, lineNumbers } = await readLines(values.file as string)
    const dryRun = values['dry-run'] === true
    const partial = values.partial === true
    const cli = await context()
    const outcome = await cli.services.imports.run({ users, where: 'file', dryRun, partial, requester: cli.requester })
    const lineOf = (r: LineResult) => lineNumbers[r.index] ?? r.index + 1
    const results: FileResult[] = outcome.results.map((r) => ('id' in r ? { line: lineOf(r), id: r.id } : { line: lineOf(r), errors: r.errors }))
    const refusals = results.flatMap((r) => ('errors' in r ? Object.values(r.errors).flat().map((message) => `line ${r.line}: ${message}`) : []))
    const verb = dryRun ? 'would import' : 'imported'
    const summary = outcome.refused > 0 && !partial
      ? `nothing ${dryRun ? 'would be ' : ''}imported: ${plural(outcome.refused, 'line')} of ${users.length} refused`
      : `${verb} ${plural(outcome.created, 'user')}${outcome.refused > 0 ? `; ${plural(outcome.refused, 'line')} refused` : ''}`
    return {
      text: summary,
      json: { created: outcome.created, refused: outcome.refused, results },
      ...(refusals.length > 0 && { refusals: refusals.join('\n'), exitCode: 1 })
    }
  }
}
