import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'data/**', 'node_modules/**']
  }),
  {
    // TypeBox's pattern names a schema and its Static type alike (`const X = Type.Object(…)`,
    // `type X = Static<typeof X>`); the compiler already refuses a real redeclaration.
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  }
]
