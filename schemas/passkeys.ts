import { Type, type Static } from '@sinclair/typebox'
import { Password, ref, Timestamp, Uuid } from './common.js'
import { VerifyTotpRequest } from './two-factor.js'

/*
 * Passkeys (docs/passkeys.md). The credential a browser returns is the WebAuthn L3 JSON
 * (`PublicKeyCredential.toJSON()`, @simplewebauthn/browser's result): each field bounded, no
 * format rule beyond base64url, so src/passkeys checks it with the same schema (the portal posts it
 * as a form field).
 */

const B64 = '^[A-Za-z0-9_-]*$'
const base64url = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: B64, description })

const CredentialId = base64url(1400, 'the credential ID, base64url (at most 1023 bytes)')
const Transports = Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { maxItems: 8, description: 'how the client can reach the authenticator (`internal`, `hybrid`, `usb`, …)' })
const ExtensionResults = Type.Object({
  credProps: Type.Optional(Type.Object({ rk: Type.Optional(Type.Boolean()) }, { additionalProperties: false }))
}, { additionalProperties: false, description: 'the client extension results; only `credProps` is asked for' })
const Attachment = Type.Optional(Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]))

export const RegistrationCredential = Type.Object({
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: base64url(8192, 'base64url of the client data JSON'),
    attestationObject: base64url(16384, 'base64url of the CBOR attestation object'),
    authenticatorData: Type.Optional(base64url(8192, 'base64url')),
    transports: Type.Optional(Transports),
    publicKey: Type.Optional(base64url(4096, 'base64url of the SubjectPublicKeyInfo')),
    publicKeyAlgorithm: Type.Optional(Type.Integer({ minimum: -65536, maximum: 65535 }))
  }, { additionalProperties: false }),
  authenticatorAttachment: Attachment,
  clientExtensionResults: ExtensionResults
}, { additionalProperties: false, description: 'What `navigator.credentials.create()` returned, as JSON (WebAuthn L3 RegistrationResponseJSON)' })
export type RegistrationCredential = Static<typeof RegistrationCredential>

export const AuthenticationCredential = Type.Object({
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: base64url(8192, 'base64url of the client data JSON'),
    authenticatorData: base64url(8192, 'base64url of the authenticator data'),
    signature: base64url(2048, 'base64url of the signature'),
    userHandle: Type.Optional(base64url(128, 'the user handle the passkey was registered with, base64url'))
  }, { additionalProperties: false }),
  authenticatorAttachment: Attachment,
  clientExtensionResults: ExtensionResults
}, { additionalProperties: false, description: 'What `navigator.credentials.get()` returned, as JSON (WebAuthn L3 AuthenticationResponseJSON)' })
export type AuthenticationCredential = Static<typeof AuthenticationCredential>

export const PasskeyName = Type.String({ notBlank: true, minLength: 1, maxLength: 64, description: 'a name the user recognises the passkey by' })

const ChallengeId = Type.String({ minLength: 1, maxLength: 64, description: 'the `challenge_id` of the options this ceremony answers' })

export const RegistrationOptionsRequest = Type.Object({
  password: Type.Optional(Password)
}, { additionalProperties: false, description: 'The password, unless the sign-in is recent (REAUTH_MAX_AGE)' })
export type RegistrationOptionsRequest = Static<typeof RegistrationOptionsRequest>

export const RegistrationVerifyRequest = Type.Object({
  challenge_id: ChallengeId,
  credential: RegistrationCredential,
  name: Type.Optional(PasskeyName)
}, { additionalProperties: false })
export type RegistrationVerifyRequest = Static<typeof RegistrationVerifyRequest>

export const LoginOptionsRequest = Type.Object({
  mfa_token: Type.Optional(Type.String({ notBlank: true, maxLength: 256, description: 'a sign-in challenge (403 mfa_required): the options then list that user\'s passkeys, for the second factor' }))
}, { additionalProperties: false })
export type LoginOptionsRequest = Static<typeof LoginOptionsRequest>

export const LoginVerifyRequest = Type.Object({
  challenge_id: ChallengeId,
  credential: AuthenticationCredential,
  remember: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type LoginVerifyRequest = Static<typeof LoginVerifyRequest>

export const RenamePasskeyRequest = Type.Object({ name: PasskeyName }, { additionalProperties: false })
export type RenamePasskeyRequest = Static<typeof RenamePasskeyRequest>

export const RemovePasskeyRequest = Type.Object({
  password: Type.Optional(Password)
}, { additionalProperties: false, description: 'The password, unless the sign-in is recent (REAUTH_MAX_AGE)' })
export type RemovePasskeyRequest = Static<typeof RemovePasskeyRequest>

export const PasskeyParams = Type.Object({ id: CredentialId }, { additionalProperties: false })
export type PasskeyParams = Static<typeof PasskeyParams>

export const UserPasskeyParams = Type.Object({ id: Uuid, passkey_id: CredentialId }, { additionalProperties: false })
export type UserPasskeyParams = Static<typeof UserPasskeyParams>

export const CeremonyOptions = Type.Object({
  challenge_id: Type.String({ description: 'send it back with the credential' }),
  options: Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: true,
    description: 'PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON, for ' +
      '`PublicKeyCredential.parseCreationOptionsFromJSON()` / `parseRequestOptionsFromJSON()` or @simplewebauthn/browser'
  })
}, { $id: 'PasskeyCeremonyOptions', description: 'The options of one ceremony; its challenge is good once, for 5 minutes' })
export type CeremonyOptions = Static<typeof CeremonyOptions>

export const Passkey = Type.Object({
  id: Type.String({ description: 'the credential ID, base64url' }),
  name: Type.String(),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
  aaguid: Type.String({ description: 'the authenticator model\'s AAGUID (all zeros when the authenticator does not tell)' }),
  transports: Type.Array(Type.String()),
  backup_eligible: Type.Boolean({ description: 'BE: the passkey can be synced (fixed at registration)' }),
  backed_up: Type.Boolean({ description: 'BS at the last use: the passkey is synced' })
}, { $id: 'Passkey' })
export type Passkey = Static<typeof Passkey>

export const PasskeyList = Type.Object({ data: Type.Array(ref(Passkey)) }, { $id: 'PasskeyList', description: 'Newest first' })

/** `POST /auth/verify-2fa` with passkeys on: a sign-in challenge may also be finished by a passkey (`webauthn`, with its `challenge_id`). */
export const VerifySecondFactorRequest = Type.Object({
  ...VerifyTotpRequest.properties,
  challenge_id: Type.Optional(ChallengeId),
  webauthn: Type.Optional(AuthenticationCredential)
}, {
  additionalProperties: false,
  oneOf: [
    { properties: { code: {} }, required: ['code'] },
    { properties: { recovery_code: {} }, required: ['recovery_code'] },
    { properties: { webauthn: {} }, required: ['webauthn'] }
  ],
  errorMessage: { oneOf: 'Exactly one of code, recovery_code and webauthn is required' },
  description: 'Either `code` (enrolment, or a sign-in), or with `mfa_token` exactly one of `code`, `recovery_code` and ' +
    '`webauthn` (a passkey\'s assertion for the options of `POST /auth/passkeys/login/options {mfa_token}`, with their `challenge_id`)'
})
export type VerifySecondFactorRequest = Static<typeof VerifySecondFactorRequest>
