import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { TokenResponse } from '../../schemas/auth.js'
import { ref, SetCookie } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import {
  CeremonyOptions, LoginOptionsRequest, LoginVerifyRequest, Passkey, RegistrationOptionsRequest, RegistrationVerifyRequest
} from '../../schemas/passkeys.js'
import { MfaChallenge } from '../../schemas/two-factor.js'
import type { PasskeyService } from '../../src/passkeys/passkey-service.js'
import { MFA_CHALLENGE_STATUS, toMfaChallenge, toTokenResponse } from '../../src/http/presenters.js'
import { SECURED } from './two-factor.js'
import { callerOf, contextOf } from '../../src/http/caller.js'

/*
 * /auth/passkeys (docs/passkeys.md), registered by routes/auth/index.ts only with ENABLE_PASSKEYS.
 * Every refusal of a credential is 400 passkey_invalid; the sign-in routes share LOGIN_RATE_LIMIT.
 */

const passkeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService }> = async (fastify, { passkeys }) => {
  fastify.post('/register/options', {
    schema: {
      tags: ['passkeys'],
      summary: 'Start adding a passkey: creation options (needs a recent sign-in, or the password)',
      security: SECURED,
      body: RegistrationOptionsRequest,
      response: { 200: ref(CeremonyOptions), ...errorResponses(400, 401, 403, 409, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    onRequest: fastify.authenticate
  }, async (request) => {
    const caller = callerOf(request)
    await fastify.services.recentAuth.require(caller, request.body.password, contextOf(request))
    return await passkeys.registrationOptions(caller)
  })

  fastify.post('/register/verify', {
    schema: {
      tags: ['passkeys'],
      summary: 'Finish adding a passkey with what the authenticator created',
      security: SECURED,
      body: RegistrationVerifyRequest,
      response: { 201: ref(Passkey), ...errorResponses(400, 401, 403, 409, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    onRequest: fastify.authenticate
  }, async (request, reply) => {
    const { challenge_id: challengeId, credential, name } = request.body
    const passkey = await passkeys.register(callerOf(request), { challengeId, credential, name }, contextOf(request))
    return reply.code(201).send(passkey)
  })

  fastify.post('/login/options', {
    schema: {
      tags: ['passkeys'],
      summary: 'Start a passkey sign-in: request options (discoverable; with `mfa_token`, that sign-in\'s second factor)',
      body: LoginOptionsRequest,
      response: { 200: ref(CeremonyOptions), ...errorResponses(400, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request) => await passkeys.loginOptions(request.body.mfa_token))

  fastify.post('/login/verify', {
    schema: {
      tags: ['passkeys'],
      summary: 'Sign in with a passkey',
      description: 'A user-verified passkey with PASSKEY_SATISFIES_MFA signs in at aal2 (`amr ["pop","mfa"]`); otherwise aal1 ' +
        '(`["pop"]`), and a user with TOTP gets the 403 `mfa_required` challenge.',
      body: LoginVerifyRequest,
      response: {
        200: ref(TokenResponse, { headers: { 'Set-Cookie': SetCookie('With `remember: true`, the cookie pair') } }),
        [MFA_CHALLENGE_STATUS]: ref(MfaChallenge),
        ...errorResponses(400, 415, 422, 429)
      }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const { challenge_id: challengeId, credential, remember } = request.body
    const outcome = await passkeys.login({ challengeId, credential, remember: remember === true }, contextOf(request))
    if (outcome.status === 'second_factor_required') return reply.code(MFA_CHALLENGE_STATUS).send(toMfaChallenge(outcome.challenge))
    if (outcome.remember) reply.setAuthCookies(outcome.pair)
    return toTokenResponse(outcome.pair)
  })
}

export default passkeyRoutes
