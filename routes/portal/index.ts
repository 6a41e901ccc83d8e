import type { FastifyPluginAsync } from 'fastify'
import codeRoutes from './code.js'
import consentRoutes from './consent.js'
import forbiddenRoutes from './forbidden.js'
import loginRoutes from './login.js'
import logoutRoutes from './logout.js'
import recoveryRoutes from './recovery.js'
import registerRoutes from './register.js'
import twoFactorRoutes from './two-factor.js'
import accountRoutes from './account/index.js'

/**
 * Everything under /portal (docs/portal.md), registered by src/app.ts with `{ prefix: '/portal' }`
 * only when ENABLE_PORTAL=true, in a scope that also holds the portal's plugins (form parser,
 * headers, CSRF, error pages), so none of them touches another route.
 */
const portalRoutes: FastifyPluginAsync = async (fastify) => {
  await fastify.register(loginRoutes)
  await fastify.register(accountRoutes)
  if (fastify.config.enableRegister) await fastify.register(registerRoutes)
  if (fastify.config.passwordReset !== undefined) await fastify.register(recoveryRoutes)
  await fastify.register(logoutRoutes)
  await fastify.register(forbiddenRoutes)
  if (fastify.config.emailOtp !== undefined) await fastify.register(codeRoutes)
  const { twoFactor, oidc } = fastify.services
  if (oidc !== undefined) await fastify.register(consentRoutes(oidc))
  if (twoFactor !== undefined) await fastify.register(twoFactorRoutes, { twoFactor })
}

export default portalRoutes
