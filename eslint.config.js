import neostandard from 'neostandard'

/*
 * Imports run one way: routes → plugins → src, and schemas/ are leaves. Each folder's block
 * below lists what it may not import; `npm run lint` fails on an import the wrong way.
 *
 *   schemas/   TypeBox constants: @sinclair/typebox, node: builtins and each other, nothing else
 *   src/       the framework-free core: src/ and schemas/ (types, constants), never fastify,
 *              a Fastify plugin, plugins/ or routes/. The composition root (src/app.ts) and the
 *              process entry (src/server.ts) wire everything and are exempt.
 *   plugins/   Fastify wiring: src/, schemas/ and other plugins, never routes/
 *   routes/    anything of the service's, never the benchmarks or the tests
 *
 * The rule sees static imports and re-exports, not `await import(…)`; the lazy imports load what
 * only a feature that is switched on needs (a driver, SMTP, TOTP, metrics, CORS) and keep to the
 * same directions.
 */
const notTestsOrBench = { regex: '^(\\.\\./)+(test|bench)/', message: 'Production code never imports the tests or the benchmarks.' }
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, notTestsOrBench] }] })

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
    files: ['src/**/*.ts'],
    ignores: ['src/app.ts', 'src/server.ts'],
    rules: restrict(
      { regex: '^(\\.\\./)+(plugins|routes)/', message: 'src/ is framework-free: plugins/ and routes/ import src/, never the reverse.' },
      // @fastify/error is a plain error factory with no tie to a Fastify instance
      { regex: '^(fastify|fastify-plugin|@fastify/(?!error$).*)$', message: 'src/ is framework-free: Fastify belongs in plugins/ and routes/ (src/app.ts wires them).' }
    )
  },
  {
    files: ['plugins/**/*.ts'],
    rules: restrict({ regex: '^(\\.\\./)+routes/', message: 'plugins/ never import routes/: routes → plugins → src.' })
  },
  {
    files: ['routes/**/*.ts'],
    rules: restrict()
  }
]
