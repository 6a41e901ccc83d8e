import type { FastifyPluginAsync } from 'fastify'
import { describeAccess } from '../../src/http/access.js'
import loginRoute from '../auth/login.js'
import auditRoutes from './audit.js'
import grantRoutes from './grants.js'
import oauth2ClientRoutes from './oauth2-clients.js'
import apiAuthRoutes from './auth.js'
import { ownSessionRoutes, userSessionRoutes } from './sessions.js'
import keyRoutes from './keys.js'
import userTwoFactorRoutes from './two-factor.js'
import userRoutes from './users.js'

/**
 * The /api boundary. /api/auth/login is registered beside the guarded scope, not inside it;
 * every other route is registered in the scope whose onRequest hook verifies the token and
 * checks the route's declared access, so a route cannot be reached around it.
 */
const apiRoutes: FastifyPluginAsync = async (fastify) => {
  await fastify.register(loginRoute, { prefix: '/auth' })
  await fastify.register(async function guarded (api) {
    api.addHook('onRequest', api.authenticate)
    // the declared access the guard reads is also what the document tells a reader
    api.addHook('onRoute', (route) => {
      const schema = route.schema as { description?: string } | undefined
      // a HEAD route shares its GET's schema: described once
      if (schema === undefined || schema.description?.includes('Access: ') === true) return
      const access = describeAccess(route.config?.access)
      schema.description = schema.description === undefined ? access : `${schema.description}\n\n${access}`
    })
    await api.register(apiAuthRoutes, { prefix: '/auth' })
    await api.register(ownSessionRoutes, { prefix: '/auth/sessions' })
    await api.register(userRoutes, { prefix: '/users' })
    await api.register(userSessionRoutes, { prefix: '/users' })
    await api.register(auditRoutes, { prefix: '/audit' })
    await api.register(keyRoutes, { prefix: '/keys' })
    // only with ENABLE_TOTP: off, the path is an unknown route (404)
    const { twoFactor } = fastify.services
    if (twoFactor !== undefined) await api.register(userTwoFactorRoutes, { prefix: '/users', twoFactor })
    // only with ENABLE_OIDC_PROVIDER: off, these paths are unknown routes (404)
    const { oidc } = fastify.services
    if (oidc !== undefined) {
      await api.register(oauth2ClientRoutes, { prefix: '/oauth2/clients', oidc })
      await api.register(grantRoutes, { prefix: '/auth/grants', oidc })
    }
  })
}

export default apiRoutes
