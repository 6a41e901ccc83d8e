import { createHash, randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { USER } from './client.js'
import { loadTest, type Load, type Sample } from './measure.js'
import { BenchError, startBenchServer, type Child } from './servers.js'

/*
 * The OpenID Connect provider's two hot requests (docs/oidc.md), each against the bare hello of
 * the same run: GET /oauth2/userinfo with an OIDC access token (a read, judged like /auth/me), and
 * the authorization_code exchange at POST /oauth2/token (two signatures and a child session
 * written per request: reported). A code is single use, so the exchange runs through a pool of
 * codes minted just before, one per request (`amount` = the pool), by a portal session
 * authorizing a skip_consent client.
 */

/** The issuer (PUBLIC_URL) of the oidc setup, portalEnv's */
export const OIDC_ISSUER = 'https://auth.bench.example'
const CLIENT = 'bench-app'
const REDIRECT = 'https://app.bench.example/callback'
const SECRET = randomBytes(32).toString('base64url')
const VERIFIER = randomBytes(32).toString('base64url')
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')
/** codes the exchange runs through, per run: minted in a few seconds, spent well within their 60 s */
export const CODE_POOL = 2000

/** The provider's settings for a setup: its clients file (one confidential skip_consent client) in `dir`. */
export function oidcEnv (dir: string): NodeJS.ProcessEnv {
  writeFileSync(join(dir, 'oidc-secret'), SECRET)
  writeFileSync(join(dir, 'oidc-clients.json'), JSON.stringify([{
    client_id: CLIENT,
    name: 'Benchmark app',
    type: 'confidential',
    redirect_uris: [REDIRECT],
    scopes: ['openid', 'profile', 'email', 'roles'],
    skip_consent: true,
    client_secret_file: join(dir, 'oidc-secret')
  }]))
  return { ENABLE_OIDC_PROVIDER: 'true', OIDC_CLIENTS_FILE: join(dir, 'oidc-clients.json'), PUBLIC_URL: OIDC_ISSUER, JWT_ALG: 'ES256' }
}

function cookiesOf (res: Response, jar: Map<string, string>): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair = ''] = line.split(';')
    const at = pair.indexOf('=')
    jar.set(pair.slice(0, at), pair.slice(at + 1))
  }
}

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ')

/** A portal session of the benchmark user: the browser's cookies after signing in at /portal/login. */
async function portalSession (child: Child): Promise<Map<string, string>> {
  const jar = new Map<string, string>()
  const page = await fetch(`${child.url}/portal/login`, { headers: { 'sec-fetch-mode': 'navigate' } })
  cookiesOf(page, jar)
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? ''
  const res = await fetch(`${child.url}/portal/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: OIDC_ISSUER, 'sec-fetch-site': 'same-origin', cookie: cookieHeader(jar) },
    body: new URLSearchParams({ csrf, email: USER.email, password: USER.password, rd: '/portal/account' }).toString()
  })
  if (res.status !== 303) throw new BenchError(`portal sign-in for the benchmark: ${res.status} ${await res.text()}`)
  cookiesOf(res, jar)
  return jar
}

/** `count` fresh authorization codes of the benchmark client, `concurrency` authorizations at a time. */
async function mintCodes (child: Child, jar: Map<string, string>, count: number): Promise<string[]> {
  const query = new URLSearchParams({ client_id: CLIENT, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid profile email roles', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 'bench' })
  const codes: string[] = []
  const one = async (): Promise<void> => {
    const res = await fetch(`${child.url}/oauth2/authorize?${query.toString()}`, { redirect: 'manual', headers: { cookie: cookieHeader(jar), 'sec-fetch-mode': 'navigate' } })
    const code = new URL(res.headers.get('location') ?? 'x:').searchParams.get('code')
    if (code === null) throw new BenchError(`authorize for the benchmark: ${res.status} ${res.headers.get('location') ?? await res.text()}`)
    codes.push(code)
  }
  for (let i = 0; i < count; i += 20) await Promise.all(Array.from({ length: Math.min(20, count - i) }, one))
  return codes
}

const TOKEN_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${CLIENT}:${SECRET}`).toString('base64')}` }
const exchangeBody = (code: string) => new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER }).toString()

/** An OIDC access token of the benchmark user for the benchmark client. */
export async function oidcAccessToken (child: Child): Promise<string> {
  const [code = ''] = await mintCodes(child, await portalSession(child), 1)
  const res = await fetch(`${child.url}/oauth2/token`, { method: 'POST', headers: TOKEN_HEADERS, body: exchangeBody(code) })
  const body = await res.json() as { access_token?: string }
  if (res.status !== 200 || body.access_token === undefined) throw new BenchError(`code exchange for the benchmark: ${res.status} ${JSON.stringify(body)}`)
  return body.access_token
}

/** GET /oauth2/userinfo with a fresh OIDC access token, for `load`. */
export async function userinfoRun (child: Child, load: Load): Promise<Sample> {
  const token = await oidcAccessToken(child)
  return await loadTest(child, { path: '/oauth2/userinfo', headers: { authorization: `Bearer ${token}` } }, load)
}

/** POST /oauth2/token (authorization_code) through CODE_POOL fresh codes, one per request. */
export async function exchangeRun (child: Child, load: Load): Promise<Sample> {
  const codes = await mintCodes(child, await portalSession(child), CODE_POOL)
  return await loadTest(child, { path: '/oauth2/token', method: 'POST', headers: TOKEN_HEADERS, nextBody: () => exchangeBody(codes.pop() ?? '') }, { ...load, amount: codes.length })
}

/** Userinfo's floor (bench/userinfo-floor.ts) in a fresh process, with the one token it keeps: an access token's length. */
export async function startUserinfoFloor (dir: string, name: string): Promise<{ child: Child, token: string }> {
  const token = randomBytes(520).toString('base64url')
  const child = await startBenchServer(dir, name, 'userinfo-floor', { FLOOR_DB: join(dir, `${name}.db`), FLOOR_TOKEN: token })
  return { child, token }
}
