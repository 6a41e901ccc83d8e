import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { startSignerUpstream } from './signer-upstream.js'
import { answerOf, CLIENT_SECRET, IdpBrowser, idpApp, refusal } from './support.js'

/*
 * Two rules of SPEC §16 that no page shows: upstream tokens are never stored (the signer records
 * every access and ID token it issued; none is in the database's files after the sign-ins), and a
 * refused callback's reason goes to the log only (the page says what every refusal says).
 */

const signer = await startSignerUpstream({ clientId: 'gatehouse', clientSecret: CLIENT_SECRET, subject: 'kept-1', email: 'kept@example.com' })
t.teardown(async () => { await signer.stop() })

const logLines: string[] = []
const app = await idpApp(t, [{ id: 'signed', type: 'oidc', display_name: 'Signer', issuer: signer.issuer, allow_signup: true }], { LOG_LEVEL: 'info' }, { logStream: { write: (line) => { logLines.push(line) } } })

/** The SQLite database's files (the main file, its WAL) as one text. */
function databaseBytes (): string {
  const dir = app.config.dataDir
  return readdirSync(dir).filter((name) => name.startsWith('gatehouse.db')).map((name) => readFileSync(join(dir, name)).toString('latin1')).join('\n')
}

t.test('upstream tokens are never stored: none of the access and ID tokens the provider issued is in the database', async (t) => {
  signer.script({})
  t.equal((await new IdpBrowser(app).signIn('signed')).callback.statusCode, 303, 'signed up')
  signer.script({ userinfo: { email: 'kept@example.com' }, claims: { email: undefined } })
  t.equal((await new IdpBrowser(app).signIn('signed')).callback.statusCode, 303, 'signed in again, its email from userinfo (the access token used)')
  const issued = signer.issued()
  t.equal(issued.length, 4, 'two access tokens and two ID tokens')
  const stored = databaseBytes()
  t.ok(stored.includes('kept-1'), 'the negative control: the subject, which is kept, is found in the same files')
  t.strictSame(issued.filter((token) => stored.includes(token)), [], 'no issued token is in them')
  // an ID token's payload is base64url; the part that names this sign-in (the nonce) is not stored either
  t.strictSame(issued.filter((token) => token.includes('.')).map((token) => token.split('.')[1] ?? '').filter((payload) => stored.includes(payload)), [])
})

t.test('a refused callback\'s reason goes to the log only: the page says what every refusal says', async (t) => {
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/signed/start')
  const url = await browser.throughUpstream(String(start.headers.location))
  url.searchParams.set('state', 'x'.repeat(43))
  const before = logLines.length
  const res = await browser.get(`${url.pathname}${url.search}`)
  t.strictSame(answerOf(res), refusal(400, 'idp_invalid', 'Sign-in failed', 'The answer from Signer could not be verified. Start the sign-in again.'))
  t.notOk(res.body.includes('state is not'), 'the reason is not on the page')
  const logged = logLines.slice(before).map((line) => JSON.parse(line) as { msg?: string, code?: string, reason?: string, provider?: string })
    .filter((line) => line.msg === 'identity provider sign-in refused')
  t.strictSame(logged.map(({ provider, code, reason }) => ({ provider, code, reason })), [{ provider: 'signed', code: 'idp_invalid', reason: 'state is not the cookie\'s' }])
})
