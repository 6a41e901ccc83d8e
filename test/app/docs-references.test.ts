import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../../src/cli/main.js'
import { ConfigSchema } from '../../src/config/config.js'
import { build } from '../helper.js'
import { idpValues } from '../routes/api/identities-support.js'
import { ROOT } from '../process/server-process.js'

/**
 * Every setting, route, CLI command and repository path that README.md and docs/ name exists: the settings in the
 * configuration schema (read at test time, so a setting added or moved needs no edit here), the
 * routes in the app as built with every switch on, the commands in the CLI's own usage, the paths
 * in the working tree.
 */

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')

/** UPPER_SNAKE names gatehouse does not read, each with the reason it is named in the docs. */
const NOT_SETTINGS: Record<string, string> = {
  NODE_OPTIONS: 'read by Node',
  NODE_EXTRA_CA_CERTS: 'read by Node',
  MALLOC_ARENA_MAX: 'read by glibc',
  KEYWORD_RULES: 'a table of src/validation/messages.ts',
  DOCS_CSP: 'a constant of routes/docs.ts',
  SRC_ORDER: 'the import order of eslint.config.js',
  MFA_METHODS: 'a constant of schemas/two-factor.ts',
  KEYCLOAK_CLIENT_SECRET: 'the variable a providers file example names in client_secret_env (docs/identity-providers.md)'
}

/** Code spans that start with "gatehouse" but are no command, each with the reason. */
const NOT_COMMANDS: Record<string, string> = {
  'gatehouse api keys': 'the HKDF info string of docs/api-keys.md',
  'gatehouse one-time secrets': 'the HKDF info string of docs/recovery.md',
  'gatehouse recovery codes': 'the HKDF info string of docs/two-factor.md',
  'gatehouse webauthn challenges': 'the HKDF info string of docs/passkeys.md'
}

/** Routes named in the docs that are not gatehouse's, each with the reason. */
const NOT_ROUTES: Record<string, string> = {
  'GET /users/:id': 'the route of the hand-written peer servers docs/benchmarks.md compares with'
}

/** Paths named in the docs that are not this repository's, each with the reason. */
const NOT_PATHS: Record<string, string> = {
  'src/gatehouse': 'where a client project writes its generated client (docs/clients.md, docs/api.md)',
  'src/gatehouse.ts': 'where a client project writes its generated client (docs/clients.md, docs/api.md)',
  'src/gatehouse.d.ts': 'where a client project writes its generated client (docs/clients.md, docs/api.md)'
}

/** The environment variables the tests and benchmarks read (TEST_DATABASE_URL, FC_SEED, …). */
function harnessVariables (): Set<string> {
  const names = new Set<string>()
  for (const folder of ['test', 'bench', 'src']) {
    for (const file of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!/\.(c?ts|js|sh)$/.test(file)) continue
      for (const m of read(join(folder, file)).matchAll(/(?:process\.env\.|\$\{?)([A-Z][A-Z0-9_]+)/g)) names.add(m[1] ?? '')
    }
  }
  return names
}

export interface Known {
  settings: Set<string>
  /** `METHOD /pattern` of every registered route */
  routes: (method: string, path: string) => boolean
  /** `group` or `group command` of every CLI command */
  commands: Set<string>
  /** whether a repository path (`src/…`, `test/…`) exists */
  paths: (path: string) => boolean
}

/** The names `text` mentions that do not exist, as `setting X`, `route M /p`, `command gatehouse g c`. */
export function unknownReferences (text: string, known: Known): string[] {
  const unknown = new Set<string>()
  for (const [name] of text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) {
    // a shell variable of an example (`$ACCESS_TOKEN`, `echo "$NEW_PASSWORD"`) is not a setting
    if (!known.settings.has(name) && !text.includes(`$${name}`) && !text.includes(`\${${name}`)) unknown.add(`setting ${name}`)
  }
  for (const [, method = '', raw = ''] of text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE)[ \t]+(\/[A-Za-z0-9._:/{}-]*)/g)) {
    const path = raw.length > 1 ? raw.replace(/[.:]+$/, '') : raw
    if (path === '/') continue // "GET / POST / DELETE": the methods of a table row, not a path
    if (!known.routes(method, path) && NOT_ROUTES[`${method} ${path}`] === undefined) unknown.add(`route ${method} ${path}`)
  }
  // commands in code only: a line of a code block that runs one (after `npx `, or a pipe into it),
  // or a code span that starts with one; prose, comments and output say "gatehouse" too
  const blocks = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
  const spans = [...text.replace(/```[\s\S]*?```/g, '').matchAll(/`(gatehouse [^`\n]+)`/g)].map((m) => m[1] ?? '').filter((span) => NOT_COMMANDS[span] === undefined)
  const lines = [...blocks.flatMap((block) => block.split('\n')), ...spans]
  for (const line of lines) {
    const m = /^\s*(?:[^#\n]*\|\s*)?(?:npx )?gatehouse ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?![\w:-])/.exec(line)
    if (m === null) continue
    const [, group = '', command] = m
    if (!known.commands.has(group)) unknown.add(`command gatehouse ${group}`)
    else if (command !== undefined && !known.commands.has(`${group} ${command}`) && !known.commands.has(`${group} `)) unknown.add(`command gatehouse ${group} ${command}`)
  }
  for (const [, path = ''] of text.matchAll(/(?:^|[^\w./-])((?:src|plugins|routes|schemas|test|bench|scripts)\/[\w./-]*\w)/gm)) {
    if (!known.paths(path) && NOT_PATHS[path] === undefined) unknown.add(`path ${path}`)
  }
  return [...unknown]
}

/** The CLI's commands as its own `--help` lists them (`  gatehouse user create --email …`). */
async function cliCommands (): Promise<Set<string>> {
  let usage = ''
  await main(['--help'], { out: (text) => { usage += text }, err: () => {} })
  const commands = new Set<string>()
  for (const [, group = '', command] of usage.matchAll(/^ {2}gatehouse ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm)) {
    commands.add(group)
    // a group of one command (`migrate`) takes no subcommand: any word after it is an argument
    commands.add(command === undefined ? `${group} ` : `${group} ${command}`)
  }
  return commands
}

async function knownNames (t: Parameters<typeof build>[0]): Promise<Known> {
  // and sign-in through identity providers with its connected accounts (docs/identity-providers.md)
  const app = await build(t, idpValues(t, {
    METRICS_ENABLED: true,
    METRICS_TOKEN: 'scrape-token-0123456789abcdef',
    ENABLE_TOTP: true,
    ENABLE_REGISTER: true,
    // the sign-in pages with every page on (docs/portal.md)
    ENABLE_PORTAL: true,
    PUBLIC_URL: 'http://auth.gh.localhost',
    ENABLE_PASSWORD_RESET: true,
    ENABLE_EMAIL_OTP: true,
    ENABLE_PASSKEYS: true,
    ENABLE_API_KEYS: true,
    // the OpenID Connect provider (docs/oidc.md), which needs an asymmetric JWT_ALG
    ENABLE_OIDC_PROVIDER: true,
    JWT_ALG: 'ES256'
  }))
  const settings = new Set([...Object.keys(ConfigSchema.properties), ...Object.keys(NOT_SETTINGS), ...harnessVariables()])
  return {
    settings,
    routes: (method, path) => app.hasRoute({ method: method as 'GET', url: path }),
    commands: await cliCommands(),
    paths: (path) => existsSync(join(ROOT, path))
  }
}

t.test('every setting, route, CLI command and source path README.md and docs/ name exists', async (t) => {
  const known = await knownNames(t)
  t.ok(known.settings.has('JWT_SECRET') && known.commands.has('keys rotate') && known.routes('GET', '/api/users/:id'), 'the known names are read')
  for (const file of DOCS) t.same(unknownReferences(read(file), known), [], file)
})

t.test('negative control: an invented setting, route, command and path are each reported', async (t) => {
  const known = await knownNames(t)
  const text = [
    'Set `SESSION_MAX_AGES=30d` and call `GET /auth/whoami` or `DELETE /api/users/:id/avatar` (see src/second-factor.ts).',
    '```sh', 'npx gatehouse user rename ann@example.com', 'gatehouse tokens list', '```',
    'Real ones pass: `SESSION_MAX_AGE`, `POST /auth/login`, src/http/credentials.ts, `gatehouse user create`, `gatehouse migrate`, `echo "$MY_PASSWORD"`.'
  ].join('\n')
  t.same(unknownReferences(text, known).sort(), [
    'command gatehouse tokens',
    'command gatehouse user rename',
    'path src/second-factor.ts',
    'route DELETE /api/users/:id/avatar',
    'route GET /auth/whoami',
    'setting SESSION_MAX_AGES'
  ])
})
