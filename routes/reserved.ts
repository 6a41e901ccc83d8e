import type { FastifyPluginAsync } from 'fastify'
import { errorResponses } from '../schemas/errors.js'
import { NotImplemented } from '../src/errors.js'

const RESERVED = ['forgot-password', 'reset-password', 'send-otp', 'verify-otp', 'enable-2fa', 'verify-2fa']

/** Paths of features that are off, by switch: while off they stay reserved. */
const FEATURE_PATHS = {
  passwordReset: ['forgot-password', 'reset-password'],
  emailOtp: ['send-otp', 'verify-otp'],
  totp: ['enable-2fa', 'verify-2fa']
} as const

/**
 * Paths reserved for features to come, or switched off: every method answers 501, before any
 * body is read. A feature switched on (routes/recovery.ts, routes/two-factor.ts) takes its paths over.
 */
const reservedRoutes: FastifyPluginAsync = async (fastify) => {
  const { config } = fastify
  const live = new Set<string>([
    ...(config.passwordReset === undefined ? [] : FEATURE_PATHS.passwordReset),
    ...(config.emailOtp === undefined ? [] : FEATURE_PATHS.emailOtp),
    ...(config.totp === undefined ? [] : FEATURE_PATHS.totp)
  ])
  for (const name of RESERVED.filter((path) => !live.has(path))) {
    fastify.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: `/auth/${name}`,
      schema: { tags: ['reserved'], summary: 'Reserved: not implemented', response: errorResponses(501) },
      onRequest: (_request, _reply, done) => { done(new NotImplemented()) },
      handler: async () => { throw new NotImplemented() }
    })
  }
}

export default reservedRoutes
