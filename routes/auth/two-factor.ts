import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref, SetCookie } from '../../schemas/common.js'
import { TokenResponse } from '../../schemas/auth.js'
import { errorResponses } from '../../schemas/errors.js'
import {
  DisableTotpRequest, EnableTotpRequest, RecoveryCodesRequest, RecoveryCodesResponse, TotpActivated, TotpEnrolment, VerifyTotpRequest
} from '../../schemas/two-factor.js'
import { VerifySecondFactorRequest } from '../../schemas/passkeys.js'
import { TokenMissing, ValidationFailed } from '../../src/errors.js'
import type { PasskeyService } from '../../src/passkeys/passkey-service.js'
import type { TwoFactorService } from '../../src/two-factor/two-factor-service.js'
import { toTokenResponse } from '../../src/http/presenters.js'
import { callerOf } from '../../src/http/caller.js'

/*
 * TOTP two-factor sign-in (docs/two-factor.md), registered by src/app.ts only with ENABLE_TOTP;
 * off, enable-2fa and verify-2fa stay reserved (501) and the others do not exist (404).
 */

export const SECURED: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }]

/** Exactly one of the two, as a 422 naming the fields otherwise. */
function oneOf (code: string | undefined, recoveryCode: string | undefined): { code?: string, recoveryCode?: string } {
  if ((code === undefined) === (recoveryCode === undefined)) {
    const message = ['Exactly one of code and recovery_code is required']
    throw new ValidationFailed({ code: message, recovery_code: message })
  }
  return code !== undefined ? { code } : { recoveryCode }
}

/** With passkeys on, `webauthn` (and its `challenge_id`) finishes a sign-in challenge too. */
function secondFactorOf (passkeys: PasskeyService | undefined, body: VerifySecondFactorRequest): Parameters<PasskeyService['secondFactor']>[0] | undefined {
  const { mfa_token: mfaToken, challenge_id: challengeId, webauthn } = body
  if (passkeys === undefined || webauthn === undefined || mfaToken === undefined) return undefined
  if (challengeId === undefined) throw new ValidationFailed({ challenge_id: ['The challenge_id field is required'] })
  return { mfaToken, challengeId, credential: webauthn }
}

const twoFactorRoutes: FastifyPluginAsyncTypebox<{ twoFactor: TwoFactorService, passkeys?: PasskeyService | undefined }> = async (fastify, { twoFactor, passkeys }) => {
  fastify.post('/enable-2fa', {
    schema: {
      tags: ['two-factor'],
      summary: 'Start enrolling a TOTP authenticator: a pending factor, its secret, otpauth URI and QR code',
      security: SECURED,
      body: EnableTotpRequest,
      response: { 200: ref(TotpEnrolment), ...errorResponses(400, 401, 403, 409, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    onRequest: fastify.authenticate
  }, async (request) => {
    const enrolment = await twoFactor.enroll(callerOf(request), request.body.password, { ip: request.ip })
    return { secret: enrolment.secret, otpauth_uri: enrolment.otpauthUri, qr_svg: enrolment.qrSvg }
  })

  fastify.post('/verify-2fa', {
    schema: {
      tags: ['two-factor'],
      summary: 'Confirm enrolment with a first code (access token), or finish a sign-in challenge (mfa_token)',
      description: 'With an access token and `{code}`: the pending factor becomes active; the answer carries the ten recovery codes ' +
        'and new tokens of this session at aal2, and every other session of the user ends. With `{mfa_token, code | recovery_code}`: ' +
        'the sign-in the challenge belongs to finishes with a TokenResponse (and the cookie pair when it asked for `remember`).',
      security: [...SECURED, {}],
      body: (passkeys === undefined ? VerifyTotpRequest : VerifySecondFactorRequest) as typeof VerifySecondFactorRequest,
      response: {
        200: {
          description: 'Enrolment: TotpActivated. A sign-in: TokenResponse',
          headers: { 'Set-Cookie': SetCookie('A sign-in that asked for `remember: true`: the cookie pair') },
          anyOf: [ref(TotpActivated), ref(TokenResponse)]
        },
        ...errorResponses(400, 401, 403, 415, 422, 429)
      }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true }
  }, async (request, reply) => {
    const { mfa_token: mfaToken, code, recovery_code: recoveryCode } = request.body
    const withPasskey = secondFactorOf(passkeys, request.body)
    if (mfaToken !== undefined) {
      const { pair, remember } = withPasskey !== undefined && passkeys !== undefined
        ? await passkeys.secondFactor(withPasskey, { ip: request.ip })
        : await twoFactor.completeChallenge(mfaToken, oneOf(code, recoveryCode), { ip: request.ip })
      if (remember) reply.setAuthCookies(pair)
      return toTokenResponse(pair)
    }
    const claims = fastify.verifiedClaimsOf(request)
    if (claims === undefined) throw new TokenMissing()
    if (code === undefined || recoveryCode !== undefined) throw new ValidationFailed({ code: ['The code field is required (recovery_code only with mfa_token)'] })
    const { recoveryCodes, pair } = await twoFactor.activate(claims, code, { ip: request.ip })
    return { recovery_codes: recoveryCodes, ...toTokenResponse(pair) }
  })

  fastify.post('/recovery-codes', {
    schema: {
      tags: ['two-factor'],
      summary: 'A new set of ten recovery codes; the old set no longer works',
      security: SECURED,
      body: RecoveryCodesRequest,
      response: { 200: ref(RecoveryCodesResponse), ...errorResponses(400, 401, 403, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    onRequest: fastify.authenticate
  }, async (request) => {
    const { password, code } = request.body
    return { recovery_codes: await twoFactor.regenerateRecoveryCodes(callerOf(request), password, code, { ip: request.ip }) }
  })

  fastify.post('/disable-2fa', {
    schema: {
      tags: ['two-factor'],
      summary: 'Turn two-factor sign-in off (the password and a code or a recovery code)',
      security: SECURED,
      body: DisableTotpRequest,
      response: { 204: { type: 'null', description: 'Turned off' }, ...errorResponses(400, 401, 403, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    onRequest: fastify.authenticate
  }, async (request, reply) => {
    const { password, code, recovery_code: recoveryCode } = request.body
    await twoFactor.disable(callerOf(request), password, oneOf(code, recoveryCode), { ip: request.ip })
    return reply.code(204).send()
  })
}

export default twoFactorRoutes
