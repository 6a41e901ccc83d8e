import { createHash, randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { formOf, listenOnLoopback, sendJson as json, stopServer } from './http-double.js'

/*
 * A small hand-written OpenID Connect provider that signs its ID tokens with jose (ES256): a real
 * signer whose tokens the test shapes, for the checks oidc-provider cannot be made to fail (a
 * wrong `aud`, `nonce` or `azp`, an `exp` past, an `iat` ahead, a key not in its JWKS or of an alg
 * it does not advertise, `alg: none`, a userinfo `sub` that is not the ID token's), and for a
 * provider that is down, slow or failing. Its userinfo endpoint answers the ID token's `sub` and
 * what the script adds; the email is the ID token's unless the script moves it there.
 */

export interface TokenScript {
  /** claims over the ID token's own (`undefined` removes one) */
  claims?: Record<string, unknown>
  /** unsigned (`alg: none`) */
  unsigned?: boolean
  /** signed by a key that is not in the JWKS, under the JWKS key's kid */
  foreignKey?: boolean
  /** signed with the JWKS's RS256 key, an alg the discovery document does not advertise (it names ES256 only) */
  rs256?: boolean
  /** userinfo's claims over its own (`sub`: the ID token's); `undefined` removes one */
  userinfo?: Record<string, unknown>
  /** the token endpoint's status instead of 200 (a body `{"error":"server_error"}`) */
  status?: number
  /** ms the token endpoint waits before answering */
  delay?: number
}

export interface SignerUpstream {
  issuer: string
  /** the ID token's claims of the next sign-ins, and how it is signed */
  script: (next: TokenScript) => void
  /** discovery answers 503 while true */
  discoveryDown: (down: boolean) => void
  /** every access token and ID token its token endpoint has issued */
  issued: () => string[]
  stop: () => Promise<void>
}

interface Pending { nonce: string, challenge: string, redirectUri: string }

export async function startSignerUpstream (client: { clientId: string, clientSecret: string, subject: string, email: string }): Promise<SignerUpstream> {
  const kid = 'signer-1'
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  const foreign = (await generateKeyPair('ES256')).privateKey
  const rsa = await generateKeyPair('RS256', { extractable: true })
  const jwks = { keys: [{ ...await exportJWK(publicKey), kid, alg: 'ES256', use: 'sig' }, { ...await exportJWK(rsa.publicKey), kid: 'signer-rs', alg: 'RS256', use: 'sig' }] }
  let script: TokenScript = {}
  let down = false
  const pending = new Map<string, Pending>()
  /** the ID token's `sub` of each access token issued, for userinfo */
  const subjects = new Map<string, unknown>()
  const issued: string[] = []
  // the issuer names the port, known once the server listens
  const self = { issuer: '' }

  /** `claims` without the ones set to undefined */
  const defined = (claims: Record<string, unknown>) => Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined))

  async function idToken (claims: Record<string, unknown>): Promise<string> {
    if (script.unsigned === true) return `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`
    if (script.rs256 === true) return await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'signer-rs', typ: 'JWT' }).sign(rsa.privateKey)
    const key: CryptoKey = script.foreignKey === true ? foreign : privateKey
    return await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(key)
  }

  async function token (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await formOf(req)
    if (script.delay !== undefined) await new Promise((resolve) => setTimeout(resolve, script.delay))
    if (script.status !== undefined) return json(res, script.status, { error: 'server_error' })
    // RFC 6749 §2.3.1: each of the two form-encoded before they are joined
    const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part.replaceAll('+', ' ')))
    const grant = pending.get(body.get('code') ?? '')
    pending.delete(body.get('code') ?? '')
    if (basic[0] !== client.clientId || basic[1] !== client.clientSecret) return json(res, 401, { error: 'invalid_client' })
    if (grant === undefined || grant.redirectUri !== body.get('redirect_uri') ||
      createHash('sha256').update(body.get('code_verifier') ?? '').digest('base64url') !== grant.challenge) return json(res, 400, { error: 'invalid_grant' })
    const now = Math.floor(Date.now() / 1000)
    const claims = defined({ iss: self.issuer, sub: client.subject, aud: client.clientId, exp: now + 300, iat: now, nonce: grant.nonce, email: client.email, email_verified: true, ...script.claims })
    const accessToken = randomBytes(16).toString('hex')
    subjects.set(accessToken, claims.sub)
    const signed = await idToken(claims)
    issued.push(accessToken, signed)
    json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: signed })
  }

  function userinfo (req: IncomingMessage, res: ServerResponse): void {
    const authorization = req.headers.authorization ?? ''
    const accessToken = authorization.startsWith('Bearer ') ? authorization.slice(7) : ''
    if (!subjects.has(accessToken)) return json(res, 401, { error: 'invalid_token' })
    json(res, 200, defined({ sub: subjects.get(accessToken), ...script.userinfo }))
  }

  function authorize (url: URL, res: ServerResponse): void {
    const code = randomBytes(16).toString('hex')
    const redirectUri = url.searchParams.get('redirect_uri') ?? ''
    pending.set(code, { nonce: url.searchParams.get('nonce') ?? '', challenge: url.searchParams.get('code_challenge') ?? '', redirectUri })
    const back = new URL(redirectUri)
    back.search = new URLSearchParams({ code, state: url.searchParams.get('state') ?? '', iss: self.issuer }).toString()
    res.writeHead(302, { location: back.href }).end()
  }

  const { server, origin } = await listenOnLoopback((req, res) => {
    const issuer = self.issuer
    const url = new URL(req.url ?? '/', issuer)
    if (url.pathname === '/.well-known/openid-configuration') {
      if (down) return json(res, 503, { error: 'temporarily_unavailable' })
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        userinfo_endpoint: `${issuer}/userinfo`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true
      })
    }
    if (url.pathname === '/jwks') return json(res, 200, jwks)
    if (url.pathname === '/authorize') return authorize(url, res)
    if (url.pathname === '/userinfo') return userinfo(req, res)
    if (url.pathname === '/token' && req.method === 'POST') {
      token(req, res).catch(() => { res.statusCode = 500; res.end() })
      return
    }
    json(res, 404, { error: 'not_found' })
  })
  self.issuer = origin
  return { issuer: origin, script: (next) => { script = next }, discoveryDown: (value) => { down = value }, issued: () => [...issued], stop: async () => await stopServer(server) }
}
