import { createHash, randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { formOf, listenOnLoopback, sendJson as json, stopServer } from './http-double.js'

/*
 * A stand-in for GitHub on a free 127.0.0.1 port, answering as GitHub documents its OAuth app
 * endpoints ("Authorizing OAuth apps") and REST API: GET /login/oauth/authorize (approved at once
 * for the scripted user), POST /login/oauth/access_token (client id and secret in the form body,
 * PKCE S256 checked, errors as GitHub sends them: 200 with an `error`), and under /api/v3 (where
 * GitHub Enterprise serves it) GET /user and GET /user/emails with the bearer token. Reusable from
 * the browser suites: startGithubDouble / stopGithubDouble.
 */

export interface GithubEmail { email: string, primary: boolean, verified: boolean, visibility?: 'public' | 'private' | null }

export interface GithubUser { id: number, login: string, name?: string | null, emails: GithubEmail[] }

export type GithubScript = GithubUser | { error: string, error_description?: string }

export interface GithubDouble {
  /** github_url */
  url: string
  /** github_api_url */
  apiUrl: string
  script: (next: GithubScript) => void
  stop: () => Promise<void>
}

interface Grant { user: GithubUser, clientId: string, redirectUri: string, challenge: string }

export async function startGithubDouble (client: { clientId: string, clientSecret: string }): Promise<GithubDouble> {
  let script: GithubScript = { error: 'access_denied', error_description: 'no user scripted' }
  const codes = new Map<string, Grant>()
  const tokens = new Map<string, GithubUser>()

  function authorize (url: URL, res: ServerResponse): void {
    const redirect = new URL(url.searchParams.get('redirect_uri') ?? '')
    redirect.searchParams.set('state', url.searchParams.get('state') ?? '')
    if ('error' in script) {
      redirect.searchParams.set('error', script.error)
      redirect.searchParams.set('error_description', script.error_description ?? script.error)
    } else {
      const code = randomBytes(10).toString('hex')
      codes.set(code, { user: script, clientId: url.searchParams.get('client_id') ?? '', redirectUri: url.searchParams.get('redirect_uri') ?? '', challenge: url.searchParams.get('code_challenge') ?? '' })
      redirect.searchParams.set('code', code)
    }
    res.writeHead(302, { location: redirect.href }).end()
  }

  async function accessToken (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await formOf(req)
    const code = body.get('code') ?? ''
    const grant = codes.get(code)
    codes.delete(code)
    const verifier = body.get('code_verifier') ?? ''
    if (body.get('client_id') !== client.clientId || body.get('client_secret') !== client.clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' })
    if (grant === undefined || grant.clientId !== client.clientId || grant.redirectUri !== body.get('redirect_uri') ||
      createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return json(res, 200, { error: 'bad_verification_code' })
    const token = `gho_${randomBytes(16).toString('hex')}`
    tokens.set(token, grant.user)
    json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
  }

  function api (req: IncomingMessage, path: string, res: ServerResponse): void {
    const user = tokens.get((req.headers.authorization ?? '').replace(/^(Bearer|token) /i, ''))
    if (user === undefined) return json(res, 401, { message: 'Bad credentials' })
    if (path === '/user') return json(res, 200, { id: user.id, login: user.login, name: user.name ?? null, email: user.emails.find((e) => e.visibility === 'public')?.email ?? null })
    if (path === '/user/emails') return json(res, 200, user.emails.map((e) => ({ visibility: null, ...e })))
    json(res, 404, { message: 'Not Found' })
  }

  const { server, origin: url } = await listenOnLoopback((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') return authorize(url, res)
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      accessToken(req, res).catch(() => { res.statusCode = 500; res.end() })
      return
    }
    if (req.method === 'GET' && url.pathname.startsWith('/api/v3/')) return api(req, url.pathname.slice('/api/v3'.length), res)
    json(res, 404, { message: 'Not Found' })
  })
  return { url, apiUrl: `${url}/api/v3`, script: (next) => { script = next }, stop: async () => await stopServer(server) }
}

export async function stopGithubDouble (double: GithubDouble): Promise<void> {
  await double.stop()
}
