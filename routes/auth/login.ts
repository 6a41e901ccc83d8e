import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LoginRequest, TokenResponse } from '../../schemas/auth.js'
import { ref, SetCookie } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { MfaChallenge } from '../../schemas/two-factor.js'
import { MFA_CHALLENGE_STATUS, toMfaChallenge, toTokenResponse } from '../../src/http/presenters.js'

/**
 * POST /login, mounted under /auth and under /api (where it is the one route without a token).
 * `remember` adds the HTTP-only cookie pair for browsers.
 */
const loginRoute: FastifyPluginAsyncTypebox = async (fastify) => {
  // with ENABLE_TOTP, a user with a second factor gets the challenge instead of tokens
  const challenge = fastify.config.totp === undefined ? {} : { 403: ref(MfaChallenge) }
  fastify.post('/login', {
    schema: {
      tags: ['auth'],
      summary: 'Sign in with email and password',
      body: LoginRequest,
      response: { 200: ref(TokenResponse, { headers: { 'Set-Cookie': SetCookie('With `remember: true`, the cookie pair') } }), ...errorResponses(400, 401, 415, 422, 429), ...challenge }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const { email, password, remember } = request.body
    const outcome = await fastify.services.auth.login(email, password, { ip: request.ip, userAgent: request.headers['user-agent'] }, remember === true)
    if (outcome.status === 'second_factor_required') return reply.code(MFA_CHALLENGE_STATUS).send(toMfaChallenge(outcome.challenge))
    if (remember === true) reply.setAuthCookies(outcome.pair)
    return toTokenResponse(outcome.pair)
  })
}

export default loginRoute
