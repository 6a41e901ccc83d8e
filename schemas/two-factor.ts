import { Type, type Static } from '@sinclair/typebox'
import { Password } from './common.js'
import { TokenResponse } from './auth.js'

/*
 * TOTP two-factor sign-in (docs/two-factor.md). Codes are bounded strings: a wrong one of any
 * shape is the catalogue's 400 invalid_otp, never a 422, so a client cannot probe the format.
 */

export const TotpCode = Type.String({ notBlank: true, maxLength: 32, description: 'the six digits the authenticator app shows now' })
export const RecoveryCode = Type.String({ notBlank: true, maxLength: 64, description: 'one of the recovery codes, each good once' })

/**
 * Exactly one of `code` and `recovery_code`, said in the schema so that validators, mock servers
 * (Prism) and generators see it; src/validation reports it under both fields with this message.
 */
export const EXACTLY_ONE_CODE = {
  // each branch names its property (`{}`: any value, the property's own schema judges it), as Ajv's strictRequired asks
  oneOf: [{ properties: { code: {} }, required: ['code'] }, { properties: { recovery_code: {} }, required: ['recovery_code'] }],
  errorMessage: { oneOf: 'Exactly one of code and recovery_code is required' }
}

export const EnableTotpRequest = Type.Object({
  password: Password
}, { additionalProperties: false })
export type EnableTotpRequest = Static<typeof EnableTotpRequest>

export const TotpEnrolment = Type.Object({
  secret: Type.String({ description: 'the 160-bit secret, base32 (for typing into an authenticator app by hand)' }),
  otpauth_uri: Type.String({ description: 'the `otpauth://totp/…` URI the QR code encodes' }),
  qr_svg: Type.String({ description: 'an SVG image of a QR code encoding exactly `otpauth_uri`' })
}, { $id: 'TotpEnrolment', description: 'A pending factor: confirm it with a first code at `POST /auth/verify-2fa`' })

export const VerifyTotpRequest = Type.Object({
  mfa_token: Type.Optional(Type.String({ notBlank: true, maxLength: 256, description: 'the challenge of a sign-in (403 mfa_required); absent: confirming enrolment with an access token' })),
  code: Type.Optional(TotpCode),
  recovery_code: Type.Optional(RecoveryCode)
}, { additionalProperties: false, ...EXACTLY_ONE_CODE, description: 'Either `code` (enrolment, or a sign-in), or with `mfa_token` exactly one of `code` and `recovery_code`' })
export type VerifyTotpRequest = Static<typeof VerifyTotpRequest>

const RecoveryCodes = Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'ten single-use recovery codes, shown this once' })

export const TotpActivated = Type.Object({
  recovery_codes: RecoveryCodes,
  ...TokenResponse.properties
}, { $id: 'TotpActivated', description: 'The factor is active: the recovery codes, and new tokens of this session at aal2' })

export const RecoveryCodesRequest = Type.Object({
  password: Password,
  code: TotpCode
}, { additionalProperties: false })
export type RecoveryCodesRequest = Static<typeof RecoveryCodesRequest>

export const RecoveryCodesResponse = Type.Object({
  recovery_codes: RecoveryCodes
}, { $id: 'RecoveryCodes', description: 'A new set; the old codes no longer work' })

export const DisableTotpRequest = Type.Object({
  password: Password,
  code: Type.Optional(TotpCode),
  recovery_code: Type.Optional(RecoveryCode)
}, { additionalProperties: false, ...EXACTLY_ONE_CODE, description: 'The password and exactly one of `code` and `recovery_code`' })
export type DisableTotpRequest = Static<typeof DisableTotpRequest>

/** The ways a challenge can be finished, in the order a client should offer them; `webauthn` only for a user with a passkey. */
export const MFA_METHODS = ['totp', 'recovery_code', 'webauthn'] as const
export type MfaMethod = typeof MFA_METHODS[number]

/**
 * The answer to a right first factor of an account with a second one: the sign-in's outcome, not
 * an error (src/accounts/sign-in.ts returns it, src/http/presenters.ts shapes it). It keeps the
 * ErrorResponse fields, so a client that switches on `code` needs nothing new.
 */
export const MfaChallenge = Type.Object({
  error: Type.Literal('Forbidden'),
  message: Type.String(),
  code: Type.Literal('mfa_required'),
  reason: Type.Literal('mfa_required', { description: 'why access was denied, as on every 403' }),
  mfa_token: Type.String({ description: 'single use; send it to `POST /auth/verify-2fa` with a code' }),
  methods: Type.Array(Type.Union(MFA_METHODS.map((method) => Type.Literal(method)))),
  expires_in: Type.Integer({ description: 'seconds the challenge lives' })
}, { $id: 'MfaChallenge', description: 'The password (or email code) was right; the account needs its second factor. No tokens, no cookies, no session yet' })
export type MfaChallenge = Static<typeof MfaChallenge>
