import * as client from 'openid-client'
import type { IdpProvider } from '../config/idp.js'
import { emailOf, type AuthorizationParams, type Upstream, type UpstreamIdentity } from './identity.js'
import type { IdpState } from './state-cookie.js'
import { CallbackRefused, UPSTREAM_TIMEOUT, upstreamFailure } from './upstream-errors.js'

/** seconds of clock difference allowed on the ID token's exp and iat (OIDC Core §3.1.3.7) */
const CLOCK_TOLERANCE = 60

type Claims = Record<string, unknown>

/**
 * An OpenID Connect provider, through openid-client: discovery at `<issuer>/.well-known/openid-configuration`
 * (its `issuer` exactly the configured one), then per sign-in the authorization code flow with PKCE
 * (S256), `state` and `nonce`. openid-client checks the authorization response (`state`, RFC 9207's
 * `iss`, required when the provider advertises it) and the ID token's claims (`iss` exact, `aud`,
 * `exp`, `nonce`, `azp` with several audiences, an advertised `alg`); enableNonRepudiationChecks makes
 * it verify the ID token's signature against the provider's JWKS too, which it otherwise leaves to
 * TLS. What it does not check is checked here: `iat` not in the future, `azp` with one audience.
 */
export async function discoverOidc (provider: IdpProvider, redirectUri: string): Promise<Upstream> {
  const issuer = provider.issuer as string
  const insecure = new URL(issuer).protocol === 'http:'
  let server: client.ServerMetadata
  try {
    const found = await client.discovery(new URL(issuer), provider.clientId, undefined, client.None(), {
      timeout: UPSTREAM_TIMEOUT,
      // src/config/idp.ts allows http only for a loopback host outside production
      execute: insecure ? [client.allowInsecureRequests] : []
    })
    server = found.serverMetadata()
  } catch (err) {
    throw upstreamFailure(err, 'discovery')
  }
  // the library compares the two as URLs (a trailing slash added); OpenID Connect Discovery compares strings
  if (server.issuer !== issuer) throw new CallbackRefused(`discovery: the document's issuer ${server.issuer} is not ${issuer} exactly`)
  const config = new client.Configuration(server, provider.clientId, { [client.clockTolerance]: CLOCK_TOLERANCE }, clientAuth(server, provider.clientSecret))
  config.timeout = UPSTREAM_TIMEOUT
  if (insecure) client.allowInsecureRequests(config)
  client.enableNonRepudiationChecks(config)
  return new OidcUpstream(provider, config, redirectUri)
}

/** client_secret_basic unless the provider takes client_secret_post only (RFC 8414: basic is the default when it lists none). */
function clientAuth (server: client.ServerMetadata, secret: string): client.ClientAuth {
  const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic']
  return !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret)
}

class OidcUpstream implements Upstream {
  constructor (private readonly provider: IdpProvider, private readonly config: client.Configuration, private readonly redirectUri: string) {}

  authorizationUrl ({ state, codeChallenge, nonce }: AuthorizationParams): string {
    return client.buildAuthorizationUrl(this.config, {
      redirect_uri: this.redirectUri,
      scope: this.provider.scopes.join(' '),
      state,
      nonce: nonce as string,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256'
    }).href
  }

  async complete (callback: URL, flow: IdpState): Promise<UpstreamIdentity> {
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
    try {
      tokens = await client.authorizationCodeGrant(this.config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true
      })
    } catch (err) {
      throw upstreamFailure(err, 'code exchange')
    }
    const idToken = tokens.claims() as Claims
    this.checkIdToken(idToken)
    const userinfo = await this.userinfo(tokens.access_token, idToken.sub as string)
    // the email and whether it is verified are read as a pair, from one source: the ID token if it names one
    const source = idToken.email !== undefined ? idToken : userinfo
    return {
      subject: idToken.sub as string,
      email: emailOf(source.email),
      emailVerified: emailOf(source.email) !== undefined && source.email_verified === true,
      name: typeof (idToken.name ?? userinfo.name) === 'string' ? String(idToken.name ?? userinfo.name) : undefined,
      claims: { ...userinfo, ...idToken },
      amr: Array.isArray(idToken.amr) ? idToken.amr.filter((m): m is string => typeof m === 'string') : []
    }
  }

  private checkIdToken (claims: Claims): void {
    const now = Math.floor(Date.now() / 1000)
    if (typeof claims.iat !== 'number' || claims.iat > now + CLOCK_TOLERANCE) throw new CallbackRefused('ID token: iat is in the future')
    if (claims.azp !== undefined && claims.azp !== this.provider.clientId) throw new CallbackRefused('ID token: azp is not the client_id')
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255) throw new CallbackRefused('ID token: sub is not a string of 1 to 255 characters')
  }

  /** The userinfo endpoint's claims, when the provider has one; its `sub` must be the ID token's. */
  private async userinfo (accessToken: string, subject: string): Promise<Claims> {
    if (this.config.serverMetadata().userinfo_endpoint === undefined) return {}
    try {
      return await client.fetchUserInfo(this.config, accessToken, subject) as Claims
    } catch (err) {
      throw upstreamFailure(err, 'userinfo')
    }
  }
}
