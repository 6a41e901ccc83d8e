import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { authHeader, build, createUser, login, PASSWORD, type CreatedUser } from '../../helper.js'
import { DATA_KEY } from '../api/oidc-support.js'
import { PageClient, PORTAL_ORIGIN } from '../portal/support.js'

/* What the /oauth2 suites share: the provider on, clients made through the API, a browser signed in, PKCE. */

export const ISSUER = PORTAL_ORIGIN
export const FLOW = { ENABLE_OIDC_PROVIDER: true, ENABLE_PORTAL: true, PUBLIC_URL: ISSUER, JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: DATA_KEY }
export const REDIRECT = 'https://app.example/cb'

export interface Flow { app: FastifyInstance, admin: { authorization: string }, secrets: Map<string, string> }

export async function flowApp (t: Test, values: Record<string, unknown> = {}): Promise<Flow> {
  const app = await build(t, { ...FLOW, ...values })
  const superuser = await createUser(app, { email: 'root@example.com', isSuperuser: true, roles: ['admin'] })
  const { access_token: token } = await login(app, superuser)
  return { app, admin: authHeader(token), secrets: new Map() }
}

/** A client through the API; confidential by default, redirect REDIRECT, its secret kept in `flow.secrets`. */
export async function addClient (flow: Flow, clientId: string, fields: Record<string, unknown> = {}): Promise<void> {
  const payload = { client_id: clientId, name: `App ${clientId}`, type: 'confidential', redirect_uris: [REDIRECT], ...fields }
  const res = await flow.app.inject({ method: 'POST', url: '/api/oauth2/clients', headers: flow.admin, payload })
  if (res.statusCode !== 201) throw new Error(`client ${clientId}: ${res.statusCode} ${res.body}`)
  const secret = (res.json() as { client_secret?: string }).client_secret
  if (secret !== undefined) flow.secrets.set(clientId, secret)
}

export function basicOf (flow: Flow, clientId: string): string {
  return `Basic ${Buffer.from(`${clientId}:${flow.secrets.get(clientId) ?? ''}`).toString('base64')}`
}

export interface Pkce { verifier: string, challenge: string }

export function pkce (): Pkce {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export function authorizeUrl (clientId: string, challenge: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'openid profile email', state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256', ...extra })
  return `/oauth2/authorize?${query.toString()}`
}

/** A browser signed in to the portal as `user`. */
export async function signedIn (flow: Flow, user: { email: string, password?: string }): Promise<PageClient> {
  const browser = new PageClient(flow.app)
  await browser.get('/portal/login')
  const res = await browser.post('/portal/login', { email: user.email, password: user.password ?? PASSWORD })
  if (res.statusCode !== 303) throw new Error(`sign-in: ${res.statusCode}`)
  return browser
}

export async function person (flow: Flow, email: string, roles: string[] = ['user']): Promise<CreatedUser> {
  return await createUser(flow.app, { email, roles })
}

/** The query of a redirect's Location. */
export function queryOf (res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(new URL(res.headers.location as string).searchParams)
}

/** GET authorize → (consent allowed when asked) → the code. */
export async function codeFor (flow: Flow, browser: PageClient, clientId: string, p: Pkce, extra: Record<string, string> = {}): Promise<string> {
  let res = await browser.get(authorizeUrl(clientId, p.challenge, extra))
  if (res.statusCode === 303 && (res.headers.location as string).includes('/portal/consent')) {
    const interaction = new URL(res.headers.location as string).searchParams.get('interaction') as string
    res = await browser.post('/portal/consent', { interaction, decision: 'allow' })
  }
  const code = queryOf(res).code
  if (code === undefined) throw new Error(`no code: ${res.statusCode} ${String(res.headers.location)}`)
  return code
}

export async function token (flow: Flow, form: Record<string, string>, clientId?: string): Promise<LightMyRequestResponse> {
  return await flow.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(clientId !== undefined && { authorization: basicOf(flow, clientId) }) },
    payload: new URLSearchParams(form).toString()
  })
}

export async function exchange (flow: Flow, clientId: string, code: string, p: Pkce, redirectUri = REDIRECT): Promise<LightMyRequestResponse> {
  return await token(flow, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: p.verifier }, clientId)
}

export function payloadOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>
}

export function headerOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>
}
