import { sql } from 'kysely'
import t from 'tap'
import { authHeader, buildFrom, databaseEnv, rawSql, TEST_SECRET, tempDir, testConfig } from '../helper.js'
import { SoftAuthenticator } from '../webauthn-authenticator.js'
import { DATA_KEY, ORIGIN, registerWith, signedInUser } from '../routes/passkeys/support.js'
import { cli } from './cli-process.js'

/*
 * `gatehouse passkeys list|delete --user <email|id> [<id>]` (src/cli/passkeys.ts) as a real process,
 * on the database of an app that registered the passkeys with the software authenticator.
 */

const PASSKEYS = { ENABLE_PASSKEYS: 'true', PUBLIC_URL: ORIGIN, DATA_ENCRYPTION_KEYS: DATA_KEY }

async function seeded (t: Parameters<typeof tempDir>[0]) {
  const dataDir = tempDir(t)
  const env = { ...await databaseEnv(t, dataDir), JWT_SECRET: TEST_SECRET, ...PASSKEYS }
  const app = await buildFrom(t, testConfig(t, { DATA_DIR: dataDir, ...PASSKEYS, ENABLE_PASSKEYS: true }))
  const user = await signedInUser(app, { email: 'ann@example.com' })
  const ids: string[] = []
  for (const name of ['Laptop', 'Phone']) {
    const res = await registerWith(app, user.access_token, new SoftAuthenticator(ORIGIN, name === 'Phone' ? { be: true, bs: true } : {}), {}, { name })
    ids.push((res.json() as { id: string }).id)
  }
  return { env, app, user, ids }
}

t.test('passkeys list: text and --json (the API\'s Passkey list), newest first', async (t) => {
  const { env, app, user, ids } = await seeded(t)
  const api = await app.inject({ method: 'GET', url: '/api/auth/passkeys', headers: authHeader(user.access_token) })
  const json = await cli(['passkeys', 'list', '--user', 'ann@example.com', '--json'], env)
  t.equal(json.code, 0, json.stderr)
  t.strictSame(JSON.parse(json.stdout), api.json())
  const { data } = api.json() as { data: Array<{ created_at: string }> }
  const text = await cli(['passkeys', 'list', '--user', user.id], env)
  t.strictSame(text, {
    code: 0,
    stdout: `${ids[1]}  Phone  added ${data[0]?.created_at}  last used never  synced\n${ids[0]}  Laptop  added ${data[1]?.created_at}  last used never  device-bound\n`,
    stderr: ''
  })
  t.strictSame(await cli(['passkeys', 'list', '--user', 'nobody@example.com'], env), { code: 1, stdout: '', stderr: 'gatehouse: no user nobody@example.com\n' })
})

t.test('passkeys delete: even the last credential of a user without a password, audited; unknown id exits 1', async (t) => {
  const { env, app, user, ids } = await seeded(t)
  await rawSql(app.config, sql`update users set password_hash = '' where id = ${user.id}`)
  for (const id of ids) {
    const res = await cli(['passkeys', 'delete', '--user', 'ann@example.com', id], env)
    t.strictSame(res, { code: 0, stdout: `removed passkey ${id} of ann@example.com\n`, stderr: '' })
  }
  t.strictSame((await app.inject({ method: 'GET', url: '/api/auth/passkeys', headers: authHeader(user.access_token) })).json(), { data: [] })
  const audit = await rawSql<{ event: string, actor_id: string | null, detail: string }>(app.config, sql`select event, actor_id, detail from audit_events where event = 'passkey_removed' order by id`)
  t.strictSame(audit, ids.map((id) => ({ event: 'passkey_removed', actor_id: null, detail: id })))
  t.strictSame(await cli(['passkeys', 'delete', '--user', 'ann@example.com', ids[0] ?? ''], env), { code: 1, stdout: '', stderr: 'gatehouse: Passkey not found\n' })
})

t.test('bad arguments exit 2 with the usage; with passkeys off, exit 1 naming the setting', async (t) => {
  const { env } = await seeded(t)
  t.strictSame(await cli(['passkeys', 'delete', '--user', 'ann@example.com'], env), {
    code: 2, stdout: '', stderr: 'gatehouse: missing <id>\nusage: gatehouse passkeys delete --user <email|id> <id>\n'
  })
  t.strictSame(await cli(['passkeys', 'list'], env), { code: 2, stdout: '', stderr: 'gatehouse: --user is required\nusage: gatehouse passkeys list --user <email|id>\n' })
  const help = await cli(['passkeys', 'list', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /^usage: gatehouse passkeys list --user <email\|id>\n/)
  const off = await cli(['passkeys', 'list', '--user', 'ann@example.com'], { ...env, ENABLE_PASSKEYS: 'false' })
  t.strictSame(off, { code: 1, stdout: '', stderr: 'gatehouse: passkeys are off: set ENABLE_PASSKEYS=true (and PUBLIC_URL) as the server has them\n' })
})
