import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { type AdapterConstructor, type Configuration } from 'oidc-provider'
import { listenOnLoopback, stopServer } from './http-double.js'

/*
 * An upstream OpenID Connect provider for the tests: panva's oidc-provider (the certified
 * implementation openid-client is written against), on a free 127.0.0.1 port, issuer
 * `http://127.0.0.1:<port>`. Its one interaction finishes at once, without a page: the account the
 * test scripted signs in and grants every scope asked, so an HTTP client (or Chromium) goes through
 * it by following redirects. Reusable from the browser suites: startUpstream / stopUpstream.
 */

/** What the scripted account says about itself (each claim only when given). */
export interface UpstreamAccount {
  sub: string
  email?: string
  /** a string ('true') is what a careless provider sends */
  email_verified?: boolean | string
  name?: string
  groups?: string[]
  /** what an upstream may claim about the user's standing at gatehouse, and gatehouse never takes */
  is_superuser?: boolean | string
  /** the authentication methods the login reports: the ID token's `amr` */
  amr?: string[]
}

/** The next interaction's result: an account signs in, or the provider answers with an error (`access_denied`: the user said no). */
export type Script = UpstreamAccount | { error: string, error_description?: string }

export interface UpstreamClient { client_id: string, client_secret: string, redirect_uris: string[] }

export interface Upstream {
  issuer: string
  /** what the next sign-in does; stays until set again */
  script: (next: Script) => void
  /** discovery requests answered so far */
  readonly discoveries: number
  stop: () => Promise<void>
}

type Stored = Record<string, unknown> & { grantId?: string, userCode?: string, uid?: string, consumed?: number }

/** oidc-provider's storage, in a Map per model (its built-in one is the same, with a warning at each start). */
function memoryAdapter (): AdapterConstructor {
  const stores = new Map<string, Map<string, Stored>>()
  return class MemoryAdapter {
    private readonly rows: Map<string, Stored>
    constructor (model: string) {
      this.rows = stores.get(model) ?? new Map()
      stores.set(model, this.rows)
    }

    async upsert (id: string, payload: Stored): Promise<void> { this.rows.set(id, payload) }
    async find (id: string): Promise<Stored | undefined> { return this.rows.get(id) }
    async findByUid (uid: string): Promise<Stored | undefined> { return [...this.rows.values()].find((row) => row.uid === uid) }
    async findByUserCode (code: string): Promise<Stored | undefined> { return [...this.rows.values()].find((row) => row.userCode === code) }
    async consume (id: string): Promise<void> {
      const row = this.rows.get(id)
      if (row !== undefined) row.consumed = Math.floor(Date.now() / 1000)
    }

    async destroy (id: string): Promise<void> { this.rows.delete(id) }
    async revokeByGrantId (grantId: string): Promise<void> {
      for (const [id, row] of this.rows) if (row.grantId === grantId) this.rows.delete(id)
    }
  }
}

// amr with openid: the ID token of a code flow carries only what the openid scope names (conformIdTokenClaims)
const CLAIMS = { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name', 'is_superuser'], groups: ['groups'] }

async function signingKeys (): Promise<{ keys: Array<Record<string, unknown>> }> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  return { keys: [{ ...await exportJWK(privateKey), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' }] }
}

function configuration (clients: UpstreamClient[], accounts: Map<string, UpstreamAccount>, jwks: Configuration['jwks']): Configuration {
  return {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'] })),
    jwks,
    adapter: memoryAdapter(),
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: CLAIMS,
    scopes: Object.keys(CLAIMS),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    // fixed lifetimes (the defaults print a notice each)
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub)
      return account === undefined ? undefined : { accountId: sub, claims: () => ({ ...account, amr: undefined }) }
    }
  }
}

/** The interaction, finished at once with the script: login and consent together, or the scripted error. */
async function interact (provider: Provider, script: Script, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if ('error' in script) {
    await provider.interactionFinished(req, res, { error: script.error, error_description: script.error_description ?? script.error }, { mergeWithLastSubmission: false })
    return
  }
  const details = await provider.interactionDetails(req, res)
  const grant = new provider.Grant({ accountId: script.sub, clientId: String(details.params.client_id) })
  grant.addOIDCScope(String(details.params.scope))
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { login: { accountId: script.sub, ...(script.amr !== undefined && { amr: script.amr }) }, consent: { grantId } }, { mergeWithLastSubmission: false })
}

export async function startUpstream (clients: UpstreamClient[]): Promise<Upstream> {
  const accounts = new Map<string, UpstreamAccount>()
  let script: Script = { error: 'login_required', error_description: 'no account scripted' }
  let discoveries = 0
  // the issuer names the port, known once the server listens
  const running: { provider?: Provider } = {}
  const { server, origin: issuer } = await listenOnLoopback((req, res) => {
    if (req.url === '/.well-known/openid-configuration') discoveries++
    const provider = running.provider
    if (req.url?.startsWith('/interaction/') === true && provider !== undefined) {
      interact(provider, script, req, res).catch((err: unknown) => { res.statusCode = 500; res.end(String(err)) })
      return
    }
    provider?.callback()(req, res)
  })
  running.provider = new Provider(issuer, configuration(clients, accounts, await signingKeys()))
  return {
    issuer,
    script: (next) => {
      script = next
      if (!('error' in next)) accounts.set(next.sub, next)
    },
    get discoveries () { return discoveries },
    stop: async () => await stopServer(server)
  }
}

export async function stopUpstream (upstream: Upstream): Promise<void> {
  await upstream.stop()
}
