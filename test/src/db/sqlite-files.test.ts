// Proves src/db/sqlite.ts.
import { chmodSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { buildFrom, createUser, login, tempDir, testConfig, type TestContext } from '../../helper.js'

/*
 * The SQLite file holds password hashes and the audit trail: only the service's own user may
 * read it, whatever the umask of the shell that started it. Always SQLite, in either pass.
 */

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8)

/** Runs the test under the common umask 022, under which a default mkdir/open gives 0755/0644. */
function withUmask022 (t: TestContext): void {
  const previous = process.umask(0o022)
  t.teardown(() => { process.umask(previous) })
}

async function appWithWrites (t: TestContext, values: Record<string, unknown>) {
  const app = await buildFrom(t, testConfig(t, values))
  const user = await createUser(app)
  await login(app, user)
  return app
}

t.test('the data folder is created 0700 and gatehouse.db, -wal and -shm are 0600 once the app has written', async (t) => {
  withUmask022(t)
  const dataDir = join(tempDir(t), 'data')
  const db = join(dataDir, 'gatehouse.db')
  await appWithWrites(t, { DATA_DIR: dataDir, DATABASE_URL: `sqlite:${db}` })
  t.same(
    { dir: modeOf(dataDir), db: modeOf(db), wal: modeOf(`${db}-wal`), shm: modeOf(`${db}-shm`) },
    { dir: '700', db: '600', wal: '600', shm: '600' })
})

t.test('the data folder created for the development secret is 0700', async (t) => {
  withUmask022(t)
  const dataDir = join(tempDir(t), 'data')
  await appWithWrites(t, { DATA_DIR: dataDir, JWT_SECRET: undefined, DATABASE_URL: 'sqlite::memory:' })
  t.same({ dir: modeOf(dataDir), secret: modeOf(join(dataDir, 'jwt-secret')) }, { dir: '700', secret: '600' })
})

t.test('database files an older version left readable by others are made 0600 at the next start', async (t) => {
  withUmask022(t)
  const dataDir = tempDir(t)
  const db = join(dataDir, 'gatehouse.db')
  const first = await appWithWrites(t, { DATA_DIR: dataDir, DATABASE_URL: `sqlite:${db}` })
  await first.close()
  chmodSync(db, 0o644)
  await appWithWrites(t, { DATA_DIR: dataDir, DATABASE_URL: `sqlite:${db}` })
  t.same({ db: modeOf(db), wal: modeOf(`${db}-wal`), shm: modeOf(`${db}-shm`) }, { db: '600', wal: '600', shm: '600' })
})
