import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigSchema } from '../../../src/config/config.js'
import { configTable, envExample, withConfigTable } from '../../../src/config/docs.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const NAMES = Object.keys(ConfigSchema.properties)

t.test('every setting of the configuration schema has a description', async (t) => {
  const undescribed = Object.entries(ConfigSchema.properties)
    .filter(([, schema]) => typeof schema.description !== 'string' || schema.description.length < 10)
    .map(([name]) => name)
  t.same(undescribed, [])
})

t.test('docs/operations.md holds the configuration table the schema generates (npm run docs:config)', async (t) => {
  const operations = read('docs/operations.md')
  t.equal(operations, withConfigTable(operations), 'run `npm run docs:config` after changing src/config/config.ts')
  for (const name of NAMES) t.match(configTable(), `| \`${name}\` |`, name)
})

t.test('.env.example is the one the schema generates, with every setting (npm run docs:config)', async (t) => {
  t.equal(read('.env.example'), envExample(), 'run `npm run docs:config` after changing src/config/config.ts')
  const listed = [...envExample().matchAll(/^(?:# )?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1])
  t.same(listed, NAMES)
})
