// `npm run docs:config`: rewrites the configuration table of docs/operations.md and .env.example
// from the configuration schema (test/src/config/docs.test.ts fails when they differ).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { envExample, withConfigTable } from '../src/config/docs.js'

const root = join(import.meta.dirname, '..')
const operations = join(root, 'docs', 'operations.md')
writeFileSync(operations, withConfigTable(readFileSync(operations, 'utf8')))
writeFileSync(join(root, '.env.example'), envExample())
