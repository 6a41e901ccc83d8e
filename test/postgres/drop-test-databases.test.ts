import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'

/*
 * test/drop-test-databases.sh, the clean-up of test/passes.sh: it drops the gh_<run id>_*
 * databases of its own run and leaves every other gh_* database on the server — another run's
 * (two developers, or CI beside a local run, sharing one PostgreSQL). Runs in the PostgreSQL pass.
 */

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'drop-test-databases.sh')
const url = process.env.TEST_DATABASE_URL ?? ''

t.test('the clean-up drops the databases of its own run only: a foreign gh_* database survives it', async (t) => {
  const admin = new pg.Pool({ connectionString: url, max: 1 })
  t.teardown(() => admin.end())
  const run = `t${randomBytes(4).toString('hex')}`
  const own = [`gh_${run}_${randomBytes(6).toString('hex')}`, `gh_${run}_${randomBytes(6).toString('hex')}`]
  // another run's database, one of a run whose id begins like this one's, and one made without a run id
  const foreign = [`gh_f${randomBytes(4).toString('hex')}_${randomBytes(6).toString('hex')}`, `gh_${run}0_${randomBytes(6).toString('hex')}`, `gh_${randomBytes(6).toString('hex')}`]
  for (const name of [...own, ...foreign]) await admin.query(`create database ${name}`)
  t.teardown(async () => { for (const name of foreign) await admin.query(`drop database if exists ${name} with (force)`) })
  const present = async () => (await admin.query<{ datname: string }>('select datname from pg_database where datname = any($1) order by datname', [[...own, ...foreign]])).rows.map((r) => r.datname)
  t.same(await present(), [...own, ...foreign].sort(), 'control: all five exist')

  await promisify(execFile)(SCRIPT, [url, run])
  t.same(await present(), [...foreign].sort(), 'the run\'s own databases are gone, the foreign ones are kept')

  await t.rejects(promisify(execFile)(SCRIPT, [url, 'gh%']), { code: 2 }, 'a run id that is a pattern is refused')
})
