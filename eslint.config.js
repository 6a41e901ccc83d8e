import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { builtinRules } from 'eslint/use-at-your-own-risk'
import neostandard from 'neostandard'

/*
 * Imports run one way: routes → plugins → src, and schemas/ are leaves. Each folder's block
 * below lists what it may not import; `npm run lint` fails on an import the wrong way.
 *
 *   schemas/   TypeBox constants: @sinclair/typebox, node: builtins and each other, nothing else
 *   src/       the framework-free core: src/ and schemas/ (types, constants), never fastify,
 *              a Fastify plugin, plugins/ or routes/. The composition roots (app.ts, server.ts,
 *              start.cts, cli.ts, services.ts) wire everything and are exempt.
 *   plugins/   Fastify wiring: src/, schemas/ and other plugins, never routes/
 *   routes/    anything of the service's but plugins/ values (a plugin's types are fine: its
 *              decorators are reached through `fastify`), never the benchmarks or the tests
 *
 * The rule sees static imports and re-exports, not `await import(…)`; the lazy imports load what
 * only a feature that is switched on needs (a driver, SMTP, TOTP, metrics, CORS) and keep to the
 * same directions.
 */

/*
 * The folders of src/, leaves first (docs/architecture.md draws the same list): a folder imports
 * only the folders before it, itself, and the two leaves every folder may import, src/errors.ts
 * and src/events.ts. cli/ is the one folder that reaches a composition root: it builds the
 * services with createServices (src/services.ts) as the server does. A new folder takes its place
 * here; until it does, loading this file fails.
 */
const SRC_ORDER = [
  'crypto', 'breached-passwords', 'portal', 'config', 'logging', 'runtime', 'validation', 'db', 'limits', 'revocations', 'observers',
  'mail', 'keys', 'tokens', 'sessions', 'two-factor', 'accounts', 'passkeys', 'api-keys', 'recovery', 'imports', 'oidc', 'idp', 'http', 'cli'
]
const ROOTS = ['app', 'server', 'start', 'cli', 'services']
const ROOTS_ALLOWED = { cli: ['services'] }

const unplaced = readdirSync(join(import.meta.dirname, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !SRC_ORDER.includes(entry.name))
if (unplaced.length > 0) {
  throw new Error(`eslint.config.js: give ${unplaced.map((d) => `src/${d.name}/`).join(', ')} a place in SRC_ORDER`)
}

const notTestsOrBench = { regex: '^(\\.\\./)+(test|bench)/', message: 'Production code never imports the tests or the benchmarks.' }
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, notTestsOrBench] }] })
const anyOf = (names) => names.map((n) => n.replaceAll('.', '\\.')).join('|')

const srcIsFrameworkFree = [
  { regex: '^(\\.\\./)+(plugins|routes)/', message: 'src/ is framework-free: plugins/ and routes/ import src/, never the reverse.' },
  // @fastify/error is a plain error factory with no tie to a Fastify instance
  { regex: '^(fastify|fastify-plugin|@fastify/(?!error$).*)$', message: 'src/ is framework-free: Fastify belongs in plugins/ and routes/ (src/app.ts wires them).' }
]

/** One block per src/ folder: the folders after it in SRC_ORDER, and the composition roots, are out of bounds. */
function folderBlock (folder, index) {
  const later = SRC_ORDER.slice(index + 1)
  const roots = ROOTS.filter((root) => !(ROOTS_ALLOWED[folder] ?? []).includes(root))
  const order = `src/${folder}/ imports only ${index === 0 ? 'the leaves' : `src/{${SRC_ORDER.slice(0, index).join(',')}}/`} (the order in eslint.config.js, docs/architecture.md)`
  const patterns = [...srcIsFrameworkFree]
  if (later.length > 0) patterns.push({ regex: `^(\\.\\./)+(${anyOf(later)})/`, message: order })
  patterns.push({ regex: `^(\\.\\./)+(${anyOf(roots)})\\.c?js$`, message: `${order}; the composition roots import the folders, never the reverse.` })
  return { files: [`src/${folder}/**/*.{ts,cts}`], rules: restrict(...patterns) }
}

// the core rule once more under another name, so one file can warn at 200 lines and fail at 250
const house = { rules: { 'max-lines': builtinRules.get('max-lines') } }
const lines = (max) => ({ max, skipBlankLines: true, skipComments: true })

export default [
  ...neostandard({
    ts: true,
    // the CommonJS process entry (src/start.cts) and what it loads
    filesTs: ['**/*.cts'],
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'data/**', 'node_modules/**']
  }),
  {
    // TypeBox's pattern names a schema and its Static type alike (`const X = Type.Object(…)`,
    // `type X = Static<typeof X>`); the compiler already refuses a real redeclaration.
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  },
  {
    files: ['schemas/**/*.ts'],
    rules: restrict({
      regex: '^(?!@sinclair/typebox$|node:|\\./)',
      message: 'schemas/ holds TypeBox constants only: import @sinclair/typebox, node: builtins or another schema.'
    })
  },
  {
    files: ['src/**/*.{ts,cts}'],
    ignores: ['src/app.ts', 'src/server.ts'],
    rules: restrict(...srcIsFrameworkFree)
  },
  {
    files: ['src/errors.ts', 'src/events.ts'],
    rules: restrict(...srcIsFrameworkFree, {
      regex: '^\\./(?!(errors|events)\\.js$)',
      message: 'src/errors.ts and src/events.ts are leaves: they import each other and schemas/ types, nothing of a folder.'
    })
  },
  ...SRC_ORDER.map(folderBlock),
  {
    files: ['plugins/**/*.ts'],
    rules: restrict({ regex: '^(\\.\\./)+routes/', message: 'plugins/ never import routes/: routes → plugins → src.' })
  },
  {
    files: ['routes/**/*.ts'],
    rules: {
      ...restrict(),
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          regex: '^(\\.\\./)+plugins/',
          allowTypeImports: true,
          message: 'routes/ reach a plugin through its decorators on `fastify`; what both need lives in src/ (e.g. src/http/access.ts).'
        }]
      }]
    }
  },
  {
    files: ['src/**/*.{ts,cts}', 'plugins/**/*.ts', 'routes/**/*.ts'],
    plugins: { house },
    rules: {
      'house/max-lines': ['warn', lines(200)],
      'max-lines': ['error', lines(250)]
    }
  },
  {
    files: ['src/**/*.{ts,cts}'],
    rules: { 'max-params': ['error', 4] }
  }
]
