import type { FastifyInstance } from 'fastify'
import oauth2FormsPlugin from '../../plugins/oauth2-forms.js'
import portalErrorsPlugin from '../../plugins/portal-errors.js'
import portalSessionPlugin from '../../plugins/portal-session.js'
import portalPlugin from '../../plugins/portal.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import authorizeRoutes from './authorize.js'
import endSessionRoutes from './end-session.js'
import tokenAdminRoutes from './tokens-admin.js'
import tokenRoutes from './token.js'
import userinfoRoutes from './userinfo.js'

/**
 * /oauth2/* (docs/oidc.md), registered by src/app.ts with `{ prefix: '/oauth2' }` only when
 * ENABLE_OIDC_PROVIDER=true, in three scopes: the browser's (authorize, end-session: the portal's
 * session, pages, headers and CSRF), the token endpoints' (form bodies, RFC 6749 §5.2 errors) and
 * userinfo's (§5's errors with RFC 6750's challenge). None of them is in /openapi.json.
 */
export async function oauth2Routes (fastify: FastifyInstance, { oidc }: { oidc: OidcServices }): Promise<void> {
  await fastify.register(async (browser) => {
    await browser.register(portalPlugin)
    await browser.register(portalSessionPlugin)
    await browser.register(portalErrorsPlugin)
    await browser.register(authorizeRoutes(oidc))
    await browser.register(endSessionRoutes(oidc))
  })
  await fastify.register(async (forms) => {
    await forms.register(oauth2FormsPlugin)
    await forms.register(tokenRoutes(oidc))
    await forms.register(tokenAdminRoutes(oidc))
  })
  await fastify.register(userinfoRoutes(oidc))
}
