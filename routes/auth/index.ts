import type { FastifyPluginAsync } from 'fastify'
import loginRoute from './login.js'
import { emailCodeRoutes, passwordResetRoutes } from './recovery.js'
import reservedRoutes, { type FeatureSwitches } from './reserved.js'
import sessionRoutes from './session.js'
import passkeyRoutes from './passkeys.js'
import twoFactorRoutes from './two-factor.js'
import verifyRoutes from './verify.js'

/**
 * Everything under /auth, registered with `{ prefix: '/auth' }`. Each feature's switch is read
 * here, once: a feature that is off registers nothing, and its paths stay reserved (501).
 */
const authRoutes: FastifyPluginAsync = async (fastify) => {
  const { config, services } = fastify
  const on: FeatureSwitches = {
    passwordReset: config.passwordReset !== undefined,
    emailOtp: config.emailOtp !== undefined,
    totp: services.twoFactor !== undefined
  }
  await fastify.register(loginRoute)
  await fastify.register(sessionRoutes)
  if (on.passwordReset) await fastify.register(passwordResetRoutes)
  if (on.emailOtp) await fastify.register(emailCodeRoutes)
  if (services.twoFactor !== undefined) await fastify.register(twoFactorRoutes, { twoFactor: services.twoFactor, passkeys: services.passkeys })
  if (services.passkeys !== undefined) await fastify.register(passkeyRoutes, { prefix: '/passkeys', passkeys: services.passkeys })
  await fastify.register(reservedRoutes, { on })
  await fastify.register(verifyRoutes)
}

export default authRoutes
