import { randomUUID, timingSafeEqual } from 'node:crypto'
import type { OidcClient } from '../config/oidc-client-rules.js'
import type { Store } from '../db/store.js'
import type { AuditSink, RequestContext } from '../events.js'
import type { Claims } from '../tokens/claims.js'
import type { AuthorizationRequest } from './authorize-request.js'
import type { ChildSessions, ClientTokens } from './child-sessions.js'
import { s256, type FlowSecrets } from './flow-secrets.js'
import { OAuthError } from './oauth-error.js'

/** §15.1 step 5: a code is good for 60 seconds, once. */
export const CODE_TTL_MS = 60_000

export interface CodeOptions { store: Store, secrets: FlowSecrets, children: ChildSessions, audit: AuditSink }

export interface Redemption { code: string, redirectUri: string | undefined, codeVerifier: string | undefined }

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

function same (a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * Authorization codes: 256 random bits, only their keyed hash stored, bound to the client, the
 * redirect_uri, the PKCE challenge, the nonce, the scopes and the portal session. Spent by one
 * conditional update that names the child session its use creates, so a replay can end it.
 */
export class AuthorizationCodes {
  constructor (private readonly options: CodeOptions) {}

  async issue (request: AuthorizationRequest, session: Claims, context: RequestContext): Promise<string> {
    const { store, secrets, audit } = this.options
    const code = secrets.generate()
    const { hash, keyId } = secrets.hash('code', code)
    const nowMs = Date.now()
    await store.oauthCodes.create({
      codeHash: hash,
      keyId,
      clientId: request.clientId,
      userId: session.user_id,
      sessionId: session.session_id,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      nonce: request.nonce ?? null,
      scopes: request.scopes,
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + CODE_TTL_MS).toISOString()
    })
    audit({ event: 'oidc_authorized', actorId: session.user_id, userId: session.user_id, sessionId: session.session_id, detail: `${request.clientId}: ${request.scopes.join(' ')}` }, context)
    return code
  }

  /**
   * The grant authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). A spent code presented again
   * is a theft signal: the child session its first use created is revoked.
   */
  async redeem ({ code, redirectUri, codeVerifier }: Redemption, client: OidcClient, context: RequestContext): Promise<ClientTokens> {
    const { store, secrets, children } = this.options
    const hashes = secrets.candidates('code', code)
    const now = new Date().toISOString()
    const childSessionId = randomUUID()
    const spent = await store.oauthCodes.spend(hashes, childSessionId, now)
    if (spent === undefined) {
      const replayed = await store.oauthCodes.markReplayed(hashes, now)
      if (replayed !== undefined) {
        if (replayed.childSessionId !== null) await children.end(replayed.childSessionId, replayed.clientId, 'oidc_code_replayed', context)
        this.options.audit({ event: 'oidc_code_replayed', outcome: 'failure', userId: replayed.userId, ...(replayed.childSessionId !== null && { sessionId: replayed.childSessionId }), detail: replayed.clientId }, context)
      }
      throw new OAuthError('invalid_grant', 'The code is invalid, expired or already used.')
    }
    if (spent.clientId !== client.clientId) throw new OAuthError('invalid_grant', 'The code was issued to another client.')
    if (redirectUri === undefined || !same(redirectUri, spent.redirectUri)) throw new OAuthError('invalid_grant', 'The redirect_uri differs from the authorization request\'s.')
    if (codeVerifier === undefined || !VERIFIER.test(codeVerifier) || !same(s256(codeVerifier), spent.codeChallenge)) {
      throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.')
    }
    const tokens = await children.start(spent, client, childSessionId, context)
    // a replay that came while the session was being made could not end it: end it now
    if (await store.oauthCodes.wasReplayed(spent.codeHash)) {
      await children.end(childSessionId, client.clientId, 'oidc_code_replayed', context)
      throw new OAuthError('invalid_grant', 'The code is invalid, expired or already used.')
    }
    return tokens
  }
}
