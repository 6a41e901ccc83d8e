import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import bcrypt from 'bcrypt'
import pg from 'pg'

/*
 * What `gatehouse user import` costs (docs/migrating.md#what-it-costs): the built command on a
 * fresh SQLite file and a fresh PostgreSQL schema, timed as a whole process (start, migrations,
 * checks, one transaction, exit), for N lines with a bcrypt hash each, then for lines with a
 * plain password (one argon2id hash each at the default parameters).
 * `npm run build:bench && node dist/bench/import-cost.js [lines] [plain-lines]`.
 */

const LINES = Number(process.argv[2] ?? 10_000)
const PLAIN = Number(process.argv[3] ?? 200)
const POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const CLI = join(import.meta.dirname, '../src/cli.js')
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-'))

function file (name: string, lines: Array<Record<string, unknown>>): string {
  const path = join(dir, name)
  writeFileSync(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n')
  return path
}

/** One run of the command: seconds and its exit code. */
function timed (env: Record<string, string>, args: string[]): { seconds: number, code: number | null } {
  const started = performance.now()
  const run = spawnSync(process.execPath, [CLI, 'user', 'import', ...args], { env: { PATH: process.env.PATH ?? '/usr/bin', JWT_SECRET: randomBytes(36).toString('base64'), ...env }, encoding: 'utf8' })
  if (run.status !== 0 && !args.includes('--dry-run')) process.stderr.write(run.stderr.split('\n').slice(0, 3).join('\n') + '\n')
  return { seconds: (performance.now() - started) / 1000, code: run.status }
}

async function sql (statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

const hash = await bcrypt.hash('Imported-Password-1', 10)
const hashed = file('hashed.jsonl', Array.from({ length: LINES }, (_, i) => ({ email: `user${i}@example.com`, name: `User ${i}`, password_hash: hash, created_at: '2020-01-02T03:04:05Z' })))
const plain = file('plain.jsonl', Array.from({ length: PLAIN }, (_, i) => ({ email: `plain${i}@example.com`, name: `Plain ${i}`, password: `Plain-Password-${i}` })))

const schema = `gatehouse_import_${randomBytes(6).toString('hex')}`
const separator = POSTGRES_URL.includes('?') ? '&' : '?'
const stores: Array<[string, Record<string, string>]> = [
  ['SQLite', { DATA_DIR: join(dir, 'sqlite') }],
  ['PostgreSQL', { DATA_DIR: join(dir, 'pg'), DATABASE_URL: `${POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` }]
]
try {
  await sql(`CREATE SCHEMA ${schema}`)
  for (const [name, env] of stores) {
    const dry = timed(env, ['--file', hashed, '--dry-run'])
    const real = timed(env, ['--file', hashed])
    const again = timed(env, ['--file', hashed, '--dry-run'])
    const passwords = timed(env, ['--file', plain])
    process.stdout.write(`${name.padEnd(11)} ${LINES} hashed lines: dry run ${dry.seconds.toFixed(2)} s, import ${real.seconds.toFixed(2)} s (exit ${real.code}), ` +
      `all taken ${again.seconds.toFixed(2)} s (exit ${again.code}); ${PLAIN} plain passwords ${passwords.seconds.toFixed(2)} s (${(1000 * passwords.seconds / PLAIN).toFixed(1)} ms a line)\n`)
  }
} finally {
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
  rmSync(dir, { recursive: true, force: true })
}
