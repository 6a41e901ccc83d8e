import type { FastifyInstance } from 'fastify'
import * as oidc from 'openid-client'
import { build, createUser, login, type CreatedUser, type TestContext } from '../helper.js'
import { freePort } from '../redis/helper.js'
import { formsOf, HttpBrowser, type Answer } from './browser.js'

/*
 * What the relying-party suites share: gatehouse as an OpenID Connect provider listening for real
 * (routes/oauth2/, routes/portal/ and the discovery documents of SPEC §15), its clients created the
 * way an operator creates them (the superuser API), the portal's sign-in and consent pages driven
 * over HTTP, and openid-client's configuration for a client.
 */

/** An asymmetric JWT_ALG, which the provider needs (its ID tokens are verified through the JWKS). */
export const OIDC_ALG = 'ES256'

export function providerValues (issuer: string, values: Record<string, unknown> = {}): Record<string, unknown> {
  return { ENABLE_PORTAL: true, ENABLE_OIDC_PROVIDER: true, PUBLIC_URL: issuer, JWT_ALG: OIDC_ALG, ...values }
}

export interface Provider { app: FastifyInstance, issuer: string, admin: string }

/**
 * The provider on a free 127.0.0.1 port, its issuer (= PUBLIC_URL) `http://<host>:<port>`: the
 * loopback address for clients that resolve names through the system (Node, Python), a
 * `*.localhost` name where Chromium is the browser. `admin` is a superuser's access token.
 */
export async function listeningProvider (t: TestContext, values: Record<string, unknown> = {}, host = '127.0.0.1'): Promise<Provider> {
  const port = await freePort()
  const issuer = `http://${host}:${port}`
  const app = await build(t, providerValues(issuer, values))
  await app.listen({ host: '127.0.0.1', port })
  const superuser = await createUser(app, { email: 'root@example.com', isSuperuser: true })
  return { app, issuer, admin: (await login(app, superuser)).access_token }
}

export interface CreatedClient { client_id: string, client_secret?: string, [field: string]: unknown }

/** POST /api/oauth2/clients as the superuser (confidential unless `client` says otherwise); fails the test on anything but 201. */
export async function createClient (provider: Provider, client: Record<string, unknown>): Promise<CreatedClient> {
  const res = await provider.app.inject({ method: 'POST', url: '/api/oauth2/clients', headers: { authorization: `Bearer ${provider.admin}` }, payload: { type: 'confidential', ...client } })
  if (res.statusCode !== 201) throw new Error(`creating the client answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/** openid-client's view of `client` at `issuer`, from the discovery document (http is the loopback's). */
export async function rpConfig (issuer: string, client: CreatedClient): Promise<oidc.Configuration> {
  const secret = client.client_secret
  const auth = secret === undefined ? oidc.None() : oidc.ClientSecretBasic(secret)
  return await oidc.discovery(new URL(issuer), client.client_id, secret === undefined ? { token_endpoint_auth_method: 'none' } : undefined, auth,
    { execute: [oidc.allowInsecureRequests] })
}

export interface Authorized { callback: URL, visited: string[] }

export interface Person { email: string, password: string }

/**
 * A browser following an authorization request through the portal: the sign-in page (when it
 * shows) filled with `person`'s credentials, the consent page (when it shows) answered with the
 * button whose text is `decision`, until gatehouse sends the browser to a URL starting with
 * `redirectUri`. `visited` is every path on the way, in order, the final redirect's included.
 */
export async function authorizeThrough (browser: HttpBrowser, url: string, person: Person, options: { redirectUri: string, decision?: 'Allow' | 'Deny' }): Promise<Authorized> {
  const visited: string[] = []
  let answer: Answer = await browser.get(url)
  visited.push(new URL(url).pathname)
  for (let step = 0; step < 10; step++) {
    const at = answer.location
    if (at !== undefined && [302, 303].includes(answer.status)) {
      visited.push(new URL(at).pathname)
      if (at.startsWith(options.redirectUri)) return { callback: new URL(at), visited }
      answer = await browser.get(at)
      continue
    }
    const page = visited.at(-1) ?? ''
    const form = formsOf(answer.body, new URL(page, url).href).find((f) => f.action.includes('/portal/login') || f.action.includes('/portal/consent'))
    if (answer.status !== 200 || form === undefined) throw new Error(`${page} answered ${answer.status}: ${answer.body.slice(0, 2000)}`)
    if (form.action.includes('/portal/login')) {
      answer = await browser.submit(form, { email: person.email, password: person.password })
      continue
    }
    const button = form.buttons.find((b) => b.text === (options.decision ?? 'Allow'))
    if (button === undefined) throw new Error(`the consent page has no ${options.decision ?? 'Allow'} button: ${answer.body}`)
    answer = await browser.submit(form, {}, button)
  }
  throw new Error(`no redirect to ${options.redirectUri} after 10 steps: ${visited.join(' → ')}`)
}

export interface Started { url: string, verifier: string, state: string, nonce: string }

/** An authorization request of `config` with PKCE S256, a state and a nonce. */
export async function authorizationRequest (config: oidc.Configuration, redirectUri: string, scope: string, extra: Record<string, string> = {}): Promise<Started> {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra
  })
  return { url: url.href, verifier, state, nonce }
}

/** A user of the provider who may sign in at the portal. */
export async function portalUser (provider: Provider, options: Parameters<typeof createUser>[1] = {}): Promise<CreatedUser> {
  return await createUser(provider.app, options)
}

/** The payload of a JWT, unverified (the suites verify through the RP libraries; this reads headers and claims). */
export function jwtPart (token: string, part: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[part] ?? '', 'base64url').toString()) as Record<string, unknown>
}
