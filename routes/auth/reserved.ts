import type { FastifyPluginAsync } from 'fastify'
import { errorResponses } from '../../schemas/errors.js'
import { NotImplemented } from '../../src/errors.js'

const RESERVED = ['forgot-password', 'reset-password', 'send-otp', 'verify-otp', 'enable-2fa', 'verify-2fa']

/** Which of the /auth features are on (routes/auth/index.ts reads each switch once). */
export interface FeatureSwitches { passwordReset: boolean, emailOtp: boolean, totp: boolean }

/** Paths of features that are off, by switch: while off they stay reserved. */
const FEATURE_PATHS = {
  passwordReset: ['forgot-password', 'reset-password'],
  emailOtp: ['send-otp', 'verify-otp'],
  totp: ['enable-2fa', 'verify-2fa']
} as const

/**
 * Paths reserved for features to come, or switched off: every method answers 501, before any
 * body is read. A feature switched on (routes/auth/recovery.ts, routes/auth/two-factor.ts) takes its paths over.
 */
const reservedRoutes: FastifyPluginAsync<{ on: FeatureSwitches }> = async (fastify, { on }) => {
  const live = new Set<string>([
    ...(on.passwordReset ? FEATURE_PATHS.passwordReset : []),
    ...(on.emailOtp ? FEATURE_PATHS.emailOtp : []),
    ...(on.totp ? FEATURE_PATHS.totp : [])
  ])
  for (const name of RESERVED.filter((path) => !live.has(path))) {
    fastify.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: `/${name}`,
      schema: { tags: ['reserved'], summary: 'Reserved: not implemented', response: errorResponses(501) },
      onRequest: (_request, _reply, done) => { done(new NotImplemented()) },
      handler: async () => { throw new NotImplemented() }
    })
  }
}

export default reservedRoutes
