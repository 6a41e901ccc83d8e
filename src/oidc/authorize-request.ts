import type { OidcClient } from '../config/oidc-client-rules.js'

/** A request of /oauth2/authorize that passed §15.1 steps 1 and 2 (docs/oidc.md#the-flow). */
export interface AuthorizationRequest {
  clientId: string
  redirectUri: string
  scopes: string[]
  state?: string | undefined
  nonce?: string | undefined
  codeChallenge: string
  prompt: string[]
  maxAge?: number | undefined
  loginHint?: string | undefined
}

/** Step 1: the client or its redirect_uri cannot be trusted, so the browser is told on a 400 page, never redirected. */
export class AuthorizePageError extends Error {
  constructor (readonly code: 'invalid_client' | 'invalid_redirect_uri' | 'invalid_request', message: string) {
    super(message)
  }
}

/** Every later error goes back to the client's redirect_uri with error, error_description, state and iss. */
export class AuthorizeRedirectError extends Error {
  constructor (readonly oauthError: string, readonly description: string, readonly redirectUri: string, readonly state: string | undefined) {
    super(description)
  }
}

type Query = Record<string, unknown>

const BOUNDS: Record<string, number> = { state: 2048, nonce: 512, scope: 512, login_hint: 254, prompt: 64, max_age: 10, response_type: 64, response_mode: 16, code_challenge: 43, code_challenge_method: 16, client_id: 64, redirect_uri: 2048 }
const PROMPTS = new Set(['none', 'login', 'consent'])
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/** One value of a parameter; a repeated one (RFC 6749 §3.1: parameters MUST NOT repeat) or an oversized one is undefined-with-error. */
function single (query: Query, name: string): { value?: string, bad: boolean } {
  const raw = query[name]
  if (raw === undefined) return { bad: false }
  if (typeof raw !== 'string' || raw.length > (BOUNDS[name] ?? 2048)) return { bad: true }
  return { value: raw, bad: false }
}

/** Step 1: the client and its redirect_uri, exactly as registered. */
export function checkClient (query: Query, client: OidcClient | undefined): string {
  const clientId = single(query, 'client_id')
  if (client === undefined || client.disabled || clientId.bad) throw new AuthorizePageError('invalid_client', 'The application is unknown or disabled.')
  const redirect = single(query, 'redirect_uri')
  if (redirect.bad || redirect.value === undefined || !client.redirectUris.includes(redirect.value)) {
    throw new AuthorizePageError('invalid_redirect_uri', 'The redirect_uri is missing or is not one the application registered.')
  }
  return redirect.value
}

/** Step 2, in the order the contract lists its errors. */
export function checkRequest (query: Query, client: OidcClient, redirectUri: string): AuthorizationRequest {
  const state = single(query, 'state')
  const fail = (error: string, description: string): never => { throw new AuthorizeRedirectError(error, description, redirectUri, state.value) }
  const get = (name: string): string | undefined => {
    const one = single(query, name)
    if (one.bad) fail('invalid_request', `The ${name} parameter is repeated or too long.`)
    return one.value
  }
  if (state.bad) fail('invalid_request', 'The state parameter is repeated or too long.')
  if (get('response_type') !== 'code') fail('unsupported_response_type', 'Only response_type=code is supported.')
  const scopes = (get('scope') ?? '').split(' ').filter((s) => s !== '')
  if (!scopes.includes('openid')) fail('invalid_scope', 'The scope must include openid.')
  const lacking = scopes.find((s) => !client.scopes.includes(s))
  if (lacking !== undefined) fail('invalid_scope', `The application may not ask for the scope ${lacking}.`)
  const challenge = get('code_challenge')
  if (challenge === undefined || !CHALLENGE.test(challenge)) fail('invalid_request', 'PKCE is required: a code_challenge of 43 base64url characters.')
  if (get('code_challenge_method') !== 'S256') fail('invalid_request', 'PKCE is required with code_challenge_method=S256.')
  if (query.request !== undefined) fail('request_not_supported', 'Request objects are not supported.')
  if (query.request_uri !== undefined) fail('request_uri_not_supported', 'Request objects are not supported.')
  const prompt = (get('prompt') ?? '').split(' ').filter((p) => p !== '')
  if (prompt.some((p) => !PROMPTS.has(p))) fail('invalid_request', 'The prompt values supported are none, login and consent.')
  if (prompt.includes('none') && prompt.length > 1) fail('invalid_request', 'prompt=none cannot be combined with another value.')
  const mode = get('response_mode')
  if (mode !== undefined && mode !== 'query') fail('invalid_request', 'Only response_mode=query is supported.')
  const maxAge = get('max_age')
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge)) fail('invalid_request', 'max_age must be a whole number of seconds.')
  return {
    clientId: client.clientId,
    redirectUri,
    scopes: [...new Set(scopes)],
    state: state.value,
    nonce: get('nonce'),
    codeChallenge: challenge as string,
    prompt,
    maxAge: maxAge === undefined ? undefined : Number(maxAge),
    loginHint: get('login_hint')
  }
}

/** The authorization response (RFC 6749 §4.1.2, RFC 9207's iss) on the client's own redirect_uri, its query kept. */
export function responseUrl (redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value)
  return url.href
}
