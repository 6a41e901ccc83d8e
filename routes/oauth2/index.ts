import type { FastifyPluginAsync } from 'fastify'
import type { OidcServices } from '../../src/oidc/provider.js'
import authorizeRoutes from './authorize.js'
import endSessionRoutes from './end-session.js'
import tokenAdminRoutes from './tokens-admin.js'
import tokenRoutes from './token.js'
import userinfoRoutes from './userinfo.js'

/**
 * /oauth2/* (docs/oidc.md), in three groups that src/app.ts registers in scopes of their own
 * under `/oauth2`, only when ENABLE_OIDC_PROVIDER=true: the browser's (authorize, end-session:
 * inside the portal's plugins, its session, pages, headers and CSRF), the token endpoints' (form
 * bodies, RFC 6749 §5.2 errors) and userinfo (§5's errors with RFC 6750's challenge). None of
 * them is in /openapi.json.
 */
export function oauth2Routes (oidc: OidcServices): { browser: FastifyPluginAsync, forms: FastifyPluginAsync, userinfo: FastifyPluginAsync } {
  return {
    browser: async (scope) => {
      await scope.register(authorizeRoutes(oidc))
      await scope.register(endSessionRoutes(oidc))
    },
    forms: async (scope) => {
      await scope.register(tokenRoutes(oidc))
      await scope.register(tokenAdminRoutes(oidc))
    },
    userinfo: userinfoRoutes(oidc)
  }
}
