import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { createClient, listeningProvider, portalUser } from './support.js'

/*
 * A Python relying party on Authlib (Debian's python3-authlib, python3-requests), a child process
 * running test/oidc/authlib-rp.py against gatehouse's provider (routes/oauth2/, the discovery
 * document, the portal's pages): discovery, the code flow with PKCE S256, RFC 9207's `iss`, the
 * ID token validated by Authlib against the JWKS, userinfo, a refresh with rotation.
 */

const PYTHON = process.env.SYSTEM_PYTHON ?? '/usr/bin/python3'
const SCRIPT = join(import.meta.dirname, 'authlib-rp.py')
const CALLBACK = 'http://127.0.0.1:9/authlib/callback'
const run = promisify(execFile)

async function authlib (env: Record<string, string>): Promise<{ code: number, stdout: string, stderr: string }> {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: install it (apt-get install -y python3-authlib python3-requests)`)
  const options = { env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', ...env }, timeout: 60_000 }
  return await run(PYTHON, [SCRIPT], options).then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number, stdout: string, stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }))
}

t.test('Authlib signs a user in through the portal and reads the claims', async (t) => {
  const provider = await listeningProvider(t)
  const user = await portalUser(provider, { email: 'linus@example.com', name: 'Linus T', roles: ['ops'] })
  const client = await createClient(provider, {
    name: 'Python app',
    redirect_uris: [CALLBACK],
    scopes: ['openid', 'profile', 'email', 'roles', 'offline_access'],
    grant_types: ['authorization_code', 'refresh_token']
  })
  const env = { ISSUER: provider.issuer, CLIENT_ID: client.client_id, CLIENT_SECRET: client.client_secret ?? '', REDIRECT_URI: CALLBACK, EMAIL: user.email, PASSWORD: user.password }

  const { code, stdout, stderr } = await authlib(env)
  t.equal(code, 0, stderr)
  t.strictSame(JSON.parse(stdout), {
    visited: ['/portal/login', '/oauth2/authorize', '/portal/consent', '/authlib/callback'],
    token_type: 'Bearer',
    scope: 'openid profile email roles offline_access',
    id_token: {
      acr: 'aal1',
      amr: ['pwd'],
      aud: client.client_id,
      azp: client.client_id,
      email: user.email,
      email_verified: false,
      iss: provider.issuer,
      name: 'Linus T',
      roles: ['ops'],
      sub: user.id
    },
    userinfo: { status: 200, body: { sub: user.id, email: user.email, email_verified: false, name: 'Linus T', roles: ['ops'] } },
    refresh_rotated: true,
    refreshed_id_token: { sub: user.id, nonce: null, aud: client.client_id }
  })

  // the negative control: a wrong secret fails the token request, and the script with it
  const wrong = await authlib({ ...env, CLIENT_SECRET: 'not-the-secret' })
  t.not(wrong.code, 0)
  t.match(wrong.stderr, 'invalid_client')
})
