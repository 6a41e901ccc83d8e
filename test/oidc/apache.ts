import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { TestContext } from '../helper.js'

/*
 * Debian's Apache httpd with mod_auth_openidc as a relying party of gatehouse, run by the test as
 * a child process (`apache2 -X`: one process in the foreground, never the system service) with a
 * configuration it writes: a protected location whose CGI prints the claims mod_auth_openidc
 * passes on (OIDC_CLAIM_* environment variables), and its logout through end_session_endpoint.
 */

const APACHE = process.env.APACHE_PATH ?? '/usr/sbin/apache2'
const MODULES = process.env.APACHE_MODULES ?? '/usr/lib/apache2/modules'
const NEEDED = ['mpm_prefork', 'authz_core', 'authz_user', 'authn_core', 'alias', 'cgi', 'auth_openidc']

/** The CGI behind the protected location: every variable mod_auth_openidc set, sorted, as text. */
const CLAIMS_CGI = `#!/bin/sh
printf 'Content-Type: text/plain; charset=utf-8\\n\\n'
env | grep '^OIDC_' | LC_ALL=C sort
`

export interface ApacheRp {
  /** http://localhost:<port> — `localhost`, which the provider allows for http redirect URIs. */
  origin: string
  redirectUri: string
  claimsUrl: string
  loggedOutUrl: string
  errorLog (): string
}

export interface ApacheOptions { issuer: string, clientId: string, clientSecret: string, port: number, scope: string }

/**
 * The configuration: OIDCProviderMetadataURL is the issuer's discovery document over http, which
 * mod_auth_openidc accepts with a warning ("SHOULD be https"); PKCE S256 (gatehouse requires it
 * of every client); the claims as environment variables, arrays joined by commas (OIDCPassClaimsAs
 * environment). OIDCRedirectURI is a "vanity" URL under the protected location, which
 * mod_auth_openidc answers itself, also for `?logout=<url>` (its RP-initiated logout).
 */
export function apacheConfig (dir: string, options: ApacheOptions): string {
  const origin = `http://localhost:${options.port}`
  // Apache refuses to serve as root: run as root (CI's container), it serves as nobody
  const uid = process.getuid?.() ?? 0
  const user = uid === 0 ? ['User nobody', 'Group nogroup'] : [`User #${uid}`, `Group #${process.getgid?.() ?? 0}`]
  return [
    `ServerRoot ${dir}`,
    `PidFile ${join(dir, 'httpd.pid')}`,
    `ErrorLog ${join(dir, 'error.log')}`,
    'LogLevel warn auth_openidc:info',
    `Listen 127.0.0.1:${options.port}`,
    'ServerName localhost',
    ...user,
    ...NEEDED.map((name) => `LoadModule ${name}_module ${join(MODULES, `mod_${name}.so`)}`),
    `OIDCProviderMetadataURL ${options.issuer}/.well-known/openid-configuration`,
    `OIDCClientID ${options.clientId}`,
    `OIDCClientSecret ${options.clientSecret}`,
    `OIDCRedirectURI ${origin}/protected/callback`,
    `OIDCCryptoPassphrase ${'k'.repeat(32)}`,
    `OIDCScope "${options.scope}"`,
    'OIDCPKCEMethod S256',
    'OIDCPassClaimsAs environment',
    `OIDCDefaultLoggedOutURL ${origin}/logged-out`,
    `ScriptAlias /protected/ ${join(dir, 'cgi')}/`,
    '<Location /protected/>',
    '  AuthType openid-connect',
    '  Require valid-user',
    '</Location>',
    `Alias /logged-out ${join(dir, 'logged-out.txt')}`,
    ''
  ].join('\n')
}

function accepts (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => { socket.end(); resolve(true) })
    socket.on('error', () => { resolve(false) })
  })
}

/** Apache with `apacheConfig` in `dir`, listening once this resolves; stopped at teardown. */
export async function startApache (t: TestContext, dir: string, options: ApacheOptions): Promise<ApacheRp> {
  if (!existsSync(APACHE)) throw new Error(`${APACHE} is missing: install it (apt-get install -y apache2 libapache2-mod-auth-openidc)`)
  const module = join(MODULES, 'mod_auth_openidc.so')
  if (!existsSync(module)) throw new Error(`${module} is missing: install it (apt-get install -y libapache2-mod-auth-openidc)`)
  mkdirSync(join(dir, 'cgi'), { recursive: true })
  chmodSync(dir, 0o755)
  writeFileSync(join(dir, 'cgi', 'claims'), CLAIMS_CGI)
  chmodSync(join(dir, 'cgi', 'claims'), 0o755)
  writeFileSync(join(dir, 'logged-out.txt'), 'signed out of the application\n')
  const conf = join(dir, 'httpd.conf')
  writeFileSync(conf, apacheConfig(dir, options))
  const errorLog = () => existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''
  const child = spawn(APACHE, ['-X', '-f', conf], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' } })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  })
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`apache2 exited ${child.exitCode}: ${stderr}${errorLog()}`)
    if (await accepts(options.port)) {
      const origin = `http://localhost:${options.port}`
      return { origin, redirectUri: `${origin}/protected/callback`, claimsUrl: `${origin}/protected/claims`, loggedOutUrl: `${origin}/logged-out`, errorLog }
    }
    await sleep(50)
  }
  throw new Error(`apache2 did not listen on ${options.port}: ${stderr}`)
}
