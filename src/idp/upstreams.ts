import type { IdpProvider } from '../config/idp.js'
import type { CoreLogger } from '../logging/logger.js'
import { githubUpstream } from './github-upstream.js'
import type { Upstream } from './identity.js'
import { discoverOidc } from './oidc-upstream.js'
import { UpstreamUnavailable } from './upstream-errors.js'

/** ms between discovery attempts of a provider whose discovery failed */
export const DISCOVERY_RETRY = 60_000

export interface UpstreamsOptions {
  providers: IdpProvider[]
  /** PUBLIC_URL, without a trailing slash: every redirect_uri is `<it>/auth/idp/<id>/callback` */
  publicUrl: string
  log: CoreLogger
  retryInterval?: number
}

/**
 * The providers of IDP_PROVIDERS_FILE and which of them are ready. A GitHub provider is ready at
 * once; an OpenID Connect provider once its discovery succeeded. One whose discovery fails (down,
 * slow, or a document that names another issuer) is hidden from the sign-in page and its start
 * route answers 503 idp_unavailable; discovery is tried again every minute until it succeeds. The
 * server starts either way: one provider down keeps no one else out.
 */
export class Upstreams {
  private readonly ready = new Map<string, Upstream>()
  private readonly byId: ReadonlyMap<string, IdpProvider>
  private timer: NodeJS.Timeout | undefined
  private discovering: Promise<void> | undefined

  constructor (private readonly options: UpstreamsOptions) {
    this.byId = new Map(options.providers.map((p) => [p.id, p]))
    for (const provider of options.providers) {
      if (provider.type === 'github') this.ready.set(provider.id, githubUpstream(provider, this.redirectUri(provider.id)))
    }
  }

  redirectUri (id: string): string {
    return `${this.options.publicUrl}/auth/idp/${id}/callback`
  }

  /** A configured provider, ready or not. */
  provider (id: string): IdpProvider | undefined {
    return this.byId.get(id)
  }

  /** The providers a sign-in can start with now, in the file's order. */
  visible (): IdpProvider[] {
    return this.options.providers.filter((p) => this.ready.has(p.id))
  }

  /** The ready provider; hidden (its discovery failed so far) → 503 idp_unavailable. */
  upstream (id: string): Upstream {
    const upstream = this.ready.get(id)
    if (upstream === undefined) throw new UpstreamUnavailable(`${id}: discovery has not succeeded yet`)
    return upstream
  }

  /** The first discovery of every OpenID Connect provider, at once (each bounded by the upstream timeout); the failed ones are retried. */
  async start (): Promise<void> {
    await this.discover()
    if (this.ready.size === this.options.providers.length) return
    this.timer = setInterval(() => { this.discovering ??= this.discover().finally(() => { this.discovering = undefined }) }, this.options.retryInterval ?? DISCOVERY_RETRY)
    this.timer.unref()
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.discovering
  }

  private async discover (): Promise<void> {
    const missing = this.options.providers.filter((p) => !this.ready.has(p.id))
    await Promise.all(missing.map(async (provider) => {
      try {
        this.ready.set(provider.id, await discoverOidc(provider, this.redirectUri(provider.id)))
        this.options.log.info({ provider: provider.id, issuer: provider.issuer }, 'identity provider discovered')
      } catch (err) {
        const reason = (err as { reason?: string }).reason ?? String(err)
        this.options.log.warn({ provider: provider.id, issuer: provider.issuer, reason }, 'identity provider discovery failed: hidden, tried again every minute')
      }
    }))
    if (this.ready.size === this.options.providers.length) clearInterval(this.timer)
  }
}
