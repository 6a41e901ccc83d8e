import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { build, rawSql, tempDir, testConfig, TEST_SECRET } from '../helper.js'
import { startServer } from './server-process.js'

t.test('the server started with a DATA_ENCRYPTION_KEYS that cannot open the stored key exits with one line naming it, creating nothing', async (t) => {
  const dir = tempDir(t)
  const app = await build(t, { DATA_DIR: dir, JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` })
  const [key, standby] = await app.services.keys.list()
  await app.close()
  const rows = async () => await rawSql(testConfig(t, { DATA_DIR: dir }), sql<{ kid: string }>`select kid from signing_keys order by seq`)

  const server = startServer({ DATA_DIR: dir, PORT: '0', JWT_SECRET: TEST_SECRET, JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const exit = await server.exited
  t.equal(exit.code, 1)
  t.equal(server.stderr(), `gatehouse: Invalid configuration: DATA_ENCRYPTION_KEYS key k1 does not decrypt signing key ${key?.kid} (a different key under the same id?)\n`)
  t.same(await rows(), [{ kid: key?.kid }, { kid: standby?.kid }], 'no key created in its place')
})
