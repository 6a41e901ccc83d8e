import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { TokenResponse } from '../../schemas/auth.js'
import { Message, ref, SetCookie } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { MfaChallenge } from '../../schemas/two-factor.js'
import { EmailVerifiedResponse, ForgotPasswordRequest, ResetPasswordRequest, SendOtpRequest, VerifyOtpRequest } from '../../schemas/recovery.js'
import { MFA_CHALLENGE_STATUS, toMfaChallenge, toTokenResponse } from '../../src/http/presenters.js'

/*
 * /auth password reset and email codes (docs/recovery.md), each pair registered by src/app.ts
 * only when its switch is on; off, routes/auth/reserved.ts answers 501 there. The two mail requests
 * answer 202 at once, the same for every address: the work that depends on the address runs
 * after the answer (src/recovery/recovery-service.ts), so neither the body nor the timing tells whether a mail went.
 */

const ACCEPTED = { message: 'If an account exists for this address, a mail is on its way' }

export const passwordResetRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { recovery } = fastify.services

  fastify.post('/forgot-password', {
    schema: {
      tags: ['recovery'],
      summary: 'Mail a password reset link (the same answer for every address)',
      body: ForgotPasswordRequest,
      response: { 202: ref(Message), ...errorResponses(400, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.mail, noStore: true }
  }, async (request, reply) => {
    recovery.requestReset(request.body.email, { ip: request.ip })
    return reply.code(202).send(ACCEPTED)
  })

  fastify.post('/reset-password', {
    schema: {
      tags: ['recovery'],
      summary: 'Set a new password with a reset token; every session of the user ends, nobody is signed in',
      body: ResetPasswordRequest,
      // 403 mfa_required: an account with TOTP on, without a valid `code`
      response: { 200: ref(Message), ...errorResponses(400, 415, 422, 429, ...(fastify.config.totp === undefined ? [] : [403])) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request) => {
    const { token, new_password: password, code } = request.body
    await recovery.resetPassword(token, password, code, { ip: request.ip })
    return { message: 'Password changed; sign in with the new password' }
  })
}

export const emailCodeRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { recovery } = fastify.services

  fastify.post('/send-otp', {
    schema: {
      tags: ['recovery'],
      summary: 'Mail a six-digit code to sign in or to confirm the address (the same answer for every address)',
      body: SendOtpRequest,
      response: { 202: ref(Message), ...errorResponses(400, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.mail, noStore: true }
  }, async (request, reply) => {
    recovery.requestCode(request.body.email, request.body.purpose, { ip: request.ip })
    return reply.code(202).send(ACCEPTED)
  })

  fastify.post('/verify-otp', {
    schema: {
      tags: ['recovery'],
      summary: 'Use an email code: sign in (`login`) or confirm the address (`verify_email`)',
      body: VerifyOtpRequest,
      response: {
        200: {
          description: '`login`: a TokenResponse as a password sign-in gives (cookies with `remember`); `verify_email`: `{email_verified: true}`',
          headers: { 'Set-Cookie': SetCookie('For `login` with `remember: true`, the cookie pair') },
          anyOf: [ref(TokenResponse), ref(EmailVerifiedResponse)]
        },
        ...errorResponses(400, 401, 415, 422, 429),
        // with ENABLE_TOTP, a `login` of a user with a second factor gets the challenge instead of tokens
        ...(fastify.config.totp === undefined ? {} : { 403: ref(MfaChallenge) })
      }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const { email, code, purpose, remember } = request.body
    const outcome = await recovery.verifyCode({ email, code, purpose, remember }, { ip: request.ip, userAgent: request.headers['user-agent'] })
    if (outcome.purpose === 'verify_email') return { email_verified: true }
    if (outcome.status === 'second_factor_required') return reply.code(MFA_CHALLENGE_STATUS).send(toMfaChallenge(outcome.challenge))
    if (remember === true) reply.setAuthCookies(outcome.pair)
    return toTokenResponse(outcome.pair)
  })
}
