import type { FastifyPluginAsync } from 'fastify'
import { errorResponses } from '../../schemas/errors.js'
import { describeAccess } from '../../src/http/access.js'
import loginRoute from '../auth/login.js'
import { ownApiKeyRoutes, serviceAccountRoutes, userApiKeyRoutes } from './api-keys.js'
import auditRoutes from './audit.js'
import grantRoutes from './grants.js'
import oauth2ClientRoutes from './oauth2-clients.js'
import apiAuthRoutes from './auth.js'
import { ownSessionRoutes, userSessionRoutes } from './sessions.js'
import keyRoutes from './keys.js'
import ownPasskeyRoutes from './passkeys.js'
import ownIdentityRoutes from './identities.js'
import userIdentityRoutes from './user-identities.js'
import userTwoFactorRoutes from './two-factor.js'
import userPasskeyRoutes from './user-passkeys.js'
import userRoutes from './users.js'
import userImportRoutes from './users-import.js'

/**
 * The /api boundary. /api/auth/login is registered beside the guarded scope, not inside it;
 * every other route is registered in the scope whose onRequest hook verifies the token and
 * checks the route's declared access, so a route cannot be reached around it.
 */
const apiRoutes: FastifyPluginAsync = async (fastify) => {
  await fastify.register(loginRoute, { prefix: '/auth' })
  await fastify.register(async function guarded (api) {
    // an API key is taken here as an access token (docs/api-keys.md); /auth/* outside /api never takes one
    api.addHook('onRequest', api.authenticateApi)
    // the declared access the guard reads is also what the document tells a reader
    const keysLimited = fastify.config.apiKeys?.rateLimit !== undefined
    api.addHook('onRoute', (route) => {
      const schema = route.schema as { description?: string, response?: Record<number, unknown> } | undefined
      // API_KEY_RATE_LIMIT may answer any guarded route with 429
      if (keysLimited && schema?.response !== undefined) schema.response[429] ??= errorResponses(429)[429]
      // a HEAD route shares its GET's schema: described once
      if (schema === undefined || schema.description?.includes('Access: ') === true) return
      const access = describeAccess(route.config?.access)
      schema.description = schema.description === undefined ? access : `${schema.description}\n\n${access}`
    })
    const { twoFactor, apiKeys, passkeys, identities, oidc } = fastify.services
    // /api/auth/* acts on the caller's sign-in session: every route of it goes in this scope, whose
    // hook refuses an API key (403 session_required)
    await api.register(async function ownAccount (own) {
      own.addHook('onRequest', own.refuseKeys)
      // ... and the document says so on each of them
      if (apiKeys !== undefined) {
        own.addHook('onRoute', (route) => {
          const response = (route.schema as { response?: Record<number, unknown> } | undefined)?.response
          if (response !== undefined) response[403] ??= errorResponses(403)[403]
        })
      }
      await own.register(apiAuthRoutes)
      await own.register(ownSessionRoutes, { prefix: '/sessions' })
      if (apiKeys !== undefined) await own.register(ownApiKeyRoutes, { prefix: '/api-keys', apiKeys })
      // only with ENABLE_PASSKEYS: off, the paths are unknown routes (404)
      if (passkeys !== undefined) await own.register(ownPasskeyRoutes, { prefix: '/passkeys', passkeys })
      // only with ENABLE_IDP_LOGIN, likewise: the user's connected accounts at identity providers
      if (identities !== undefined) await own.register(ownIdentityRoutes, { prefix: '/identities', identities })
      // only with ENABLE_OIDC_PROVIDER, likewise: the apps the user authorized
      if (oidc !== undefined) await own.register(grantRoutes, { prefix: '/grants', oidc })
    }, { prefix: '/auth' })
    await api.register(userRoutes, { prefix: '/users' })
    await api.register(userSessionRoutes, { prefix: '/users' })
    await api.register(userImportRoutes, { prefix: '/users' })
    await api.register(auditRoutes, { prefix: '/audit' })
    await api.register(keyRoutes, { prefix: '/keys' })
    // only with ENABLE_API_KEYS: off, the paths are unknown routes (404)
    if (apiKeys !== undefined) {
      await api.register(userApiKeyRoutes, { prefix: '/users', apiKeys })
      await api.register(serviceAccountRoutes, { prefix: '/service-accounts', apiKeys })
    }
    // only with ENABLE_TOTP: off, the path is an unknown route (404)
    if (twoFactor !== undefined) await api.register(userTwoFactorRoutes, { prefix: '/users', twoFactor })
    // only with ENABLE_PASSKEYS, likewise
    if (passkeys !== undefined) await api.register(userPasskeyRoutes, { prefix: '/users', passkeys })
    if (identities !== undefined) await api.register(userIdentityRoutes, { prefix: '/users', identities })
    // only with ENABLE_OIDC_PROVIDER: off, these paths are unknown routes (404)
    if (oidc !== undefined) await api.register(oauth2ClientRoutes, { prefix: '/oauth2/clients', oidc })
  })
}

export default apiRoutes
