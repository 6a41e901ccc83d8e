import type { TSchema } from '@sinclair/typebox'
import { ConfigSchema } from './config.js'

/*
 * The configuration table of docs/operations.md and the whole .env.example, written from the
 * schema's descriptions so neither can drift from the code (`npm run docs:config`; a test
 * compares both files with what this writes). Never imported by the server.
 */

export const TABLE_START = '<!-- config-table:start -->'
export const TABLE_END = '<!-- config-table:end -->'
const WIDTH = 100

interface Setting { name: string, schema: TSchema }

function settings (): Setting[] {
  return Object.entries(ConfigSchema.properties).map(([name, schema]) => ({ name, schema }))
}

function defaultOf (schema: TSchema): string | undefined {
  return schema.default === undefined ? undefined : String(schema.default)
}

/** The values a setting accepts, where the schema says more than its description. */
function accepts (schema: TSchema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).map((s) => `\`${String(s.const)}\``).join(', ')
  if (schema.type === 'integer') {
    return schema.maximum === undefined ? `an integer ≥ ${String(schema.minimum)}` : `an integer ${String(schema.minimum)} … ${String(schema.maximum)}`
  }
  return ''
}

function cell (text: string): string {
  return text.replaceAll('|', '\\|')
}

/** The Markdown table, one row per setting in the schema's order. */
export function configTable (): string {
  const rows = settings().map(({ name, schema }) => {
    const value = defaultOf(schema)
    const shown = value === undefined ? '—' : value === '' ? '(empty)' : `\`${value}\``
    const kind = accepts(schema)
    return `| \`${name}\` | ${cell(shown)} | ${cell(String(schema.description ?? ''))}${kind === '' ? '' : cell(`. Accepts: ${kind}`)} |`
  })
  return ['| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n')
}

/** `text` as comment lines of at most WIDTH characters. */
function comment (text: string): string[] {
  const lines: string[] = []
  let line = '#'
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > WIDTH && line !== '#') {
      lines.push(line)
      line = '#'
    }
    line += ` ${word}`
  }
  return [...lines, line]
}

/** The whole .env.example: every setting, described, with its default (or commented out). */
export function envExample (): string {
  const header = [
    ...comment('Every gatehouse setting with its default. Copy to .env and adjust: the environment wins over this file. ' +
      'Generated from the configuration schema (src/config/config.ts and the area modules beside it) by `npm run docs:config`; edit the descriptions there, not here.')
  ]
  const blocks = settings().map(({ name, schema }) => {
    const value = defaultOf(schema)
    const example = Array.isArray(schema.examples) ? String(schema.examples[0]) : ''
    const line = value === undefined ? `# ${name}=${example}` : `${name}=${value}`
    return [...comment(String(schema.description ?? '')), line].join('\n')
  })
  return [header.join('\n'), ...blocks].join('\n\n') + '\n'
}

/** `markdown` with the text between the table markers replaced by the generated table. */
export function withConfigTable (markdown: string): string {
  const start = markdown.indexOf(TABLE_START)
  const end = markdown.indexOf(TABLE_END)
  if (start === -1 || end < start) throw new Error(`the markers ${TABLE_START} … ${TABLE_END} are missing`)
  return `${markdown.slice(0, start + TABLE_START.length)}\n${configTable()}\n${markdown.slice(end)}`
}
