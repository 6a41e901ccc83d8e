import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { buildFrom, databaseEnv, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { cli } from '../process/cli-process.js'
import { argon2Cli, htpasswdBcrypt, pythonHash } from '../src/crypto/foreign-hashes.js'

/*
 * `gatehouse user import` (src/cli/import.ts) on PostgreSQL: the command as a real process on the
 * test's own schema, its users read back and signed in by an app on that schema. Runs in the
 * PostgreSQL pass only (test/passes.sh); test/process/cli-import.test.ts runs the command on SQLite.
 */

const PASSWORD = 'Legacy-Pass-1'

t.test('the CLI imports into PostgreSQL: a dry run writes nothing, the import writes every line, and each user signs in', async (t) => {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET }
  const hashes = [await htpasswdBcrypt(PASSWORD, 4), await argon2Cli(PASSWORD, { type: 'i', memoryKiB: 1024, time: 2, lanes: 1 }), await pythonHash(PASSWORD, { kind: 'django', rounds: 1000 })]
  const users = [
    ...hashes.map((hash, i) => ({ email: `pg${i}@example.com`, name: `Postgres ${i}`, password_hash: hash })),
    { email: 'plain@example.com', name: 'Plain Text', password: 'Plain-Pass-1' },
    { email: 'none@example.com', name: 'No Password' }
  ]
  const file = join(dataDir, 'users.jsonl')
  writeFileSync(file, users.map((u) => JSON.stringify(u)).join('\n'))

  t.strictSame(await cli(['user', 'import', '--file', file, '--dry-run'], env), { code: 0, stdout: 'would import 5 users\n', stderr: '' })
  t.strictSame(await cli(['user', 'import', '--file', file], env), { code: 0, stdout: 'imported 5 users\n', stderr: '' })
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir }))
  t.equal(app.store.kind, 'postgres')
  t.equal(await app.store.users.count(), 5)
  const { entries } = await app.auditTrail.page({ event: 'users_imported' }, 1, 10)
  t.same(entries.map((e) => [e.address, e.actorId, e.detail]), [['cli', null, 'created 5']], 'one event: the dry run wrote none')

  const signIns: Array<[string, string]> = [['pg0@example.com', PASSWORD], ['pg1@example.com', PASSWORD], ['pg2@example.com', PASSWORD], ['plain@example.com', 'Plain-Pass-1']]
  for (const [email, password] of signIns) {
    const ok = await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } })
    t.equal(ok.statusCode, 200, `${email} signs in`)
  }
  const rehashed = await app.auditTrail.page({ event: 'password_rehashed' }, 1, 10)
  t.same(rehashed.entries.map((e) => e.detail).sort(), ['argon2i', 'bcrypt', 'pbkdf2_sha256'], 'the three imported hashes rehashed, the plain password already today\'s')

  const again = await cli(['user', 'import', '--file', file], env)
  t.equal(again.code, 1, 'the same file again: every line is already taken')
  t.equal(again.stdout, 'nothing imported: 5 lines of 5 refused\n')
  t.equal(await app.store.users.count(), 5)
})
