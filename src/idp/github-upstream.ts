import * as client from 'openid-client'
import type { IdpProvider } from '../config/idp.js'
import { emailOf, type AuthorizationParams, type Upstream, type UpstreamIdentity } from './identity.js'
import type { IdpState } from './state-cookie.js'
import { CallbackRefused, UPSTREAM_TIMEOUT, upstreamFailure, UpstreamUnavailable } from './upstream-errors.js'

/** What GitHub's REST API is asked with (docs.github.com: "Getting started with the REST API"). */
const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' }

interface GithubEmail { email?: unknown, primary?: unknown, verified?: unknown }

/**
 * GitHub (or GitHub Enterprise, or a test double at `github_url`/`github_api_url`): plain OAuth 2,
 * no discovery and no ID token, through openid-client's OAuth 2 functions on a fixed description
 * of GitHub's endpoints. Its client secret goes in the token request's body, as GitHub documents.
 * The subject is `/user`'s numeric `id` (a login can be renamed and reused; the id cannot), the
 * email only the `/user/emails` entry both primary and verified.
 */
export function githubUpstream (provider: IdpProvider, redirectUri: string): Upstream {
  const server: client.ServerMetadata = {
    issuer: provider.githubUrl,
    authorization_endpoint: `${provider.githubUrl}/login/oauth/authorize`,
    token_endpoint: `${provider.githubUrl}/login/oauth/access_token`
  }
  const config = new client.Configuration(server, provider.clientId, undefined, client.ClientSecretPost(provider.clientSecret))
  config.timeout = UPSTREAM_TIMEOUT
  // src/config/idp.ts allows http only for a loopback host outside production
  if (new URL(provider.githubUrl).protocol === 'http:' || new URL(provider.githubApiUrl).protocol === 'http:') client.allowInsecureRequests(config)
  return new GithubUpstream(provider, config, redirectUri)
}

class GithubUpstream implements Upstream {
  constructor (private readonly provider: IdpProvider, private readonly config: client.Configuration, private readonly redirectUri: string) {}

  authorizationUrl ({ state, codeChallenge }: AuthorizationParams): string {
    return client.buildAuthorizationUrl(this.config, {
      redirect_uri: this.redirectUri,
      scope: this.provider.scopes.join(' '),
      state,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256'
    }).href
  }

  async complete (callback: URL, flow: IdpState): Promise<UpstreamIdentity> {
    let accessToken: string
    try {
      accessToken = (await client.authorizationCodeGrant(this.config, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state })).access_token
    } catch (err) {
      throw upstreamFailure(err, 'code exchange')
    }
    const user = await this.get(accessToken, '/user') as Record<string, unknown> | null
    const id = user?.id
    if (user === null || typeof id !== 'number' || !Number.isSafeInteger(id)) throw new CallbackRefused('/user has no numeric id')
    const emails = await this.get(accessToken, '/user/emails')
    const primary = Array.isArray(emails) ? (emails as GithubEmail[]).find((e) => e.primary === true && e.verified === true) : undefined
    const email = emailOf(primary?.email)
    return {
      subject: String(id),
      email,
      emailVerified: email !== undefined,
      name: typeof user.name === 'string' ? user.name : undefined,
      claims: user,
      amr: []
    }
  }

  /** A GET of GitHub's API with the user's token: its JSON, or a refusal (a 5xx or no answer: unavailable). */
  private async get (accessToken: string, path: string): Promise<unknown> {
    let response: Response
    try {
      response = await client.fetchProtectedResource(this.config, accessToken, new URL(`${this.provider.githubApiUrl}${path}`), 'GET', undefined, new Headers(API_HEADERS))
    } catch (err) {
      throw upstreamFailure(err, path)
    }
    if (response.status >= 500) throw new UpstreamUnavailable(`${path}: HTTP ${response.status}`)
    if (response.status !== 200) throw new CallbackRefused(`${path}: HTTP ${response.status}`)
    try {
      return await response.json()
    } catch {
      throw new CallbackRefused(`${path}: not JSON`)
    }
  }
}
