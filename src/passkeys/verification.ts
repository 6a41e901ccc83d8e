import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server'
import type { RegistrationCredential, AuthenticationCredential } from '../../schemas/passkeys.js'
import type { StoredPasskey } from '../db/passkeys.js'
import type { SpentChallenge } from './challenges.js'

/** COSE algorithms: EdDSA, ES256, RS256 */
export const ALGORITHMS = [-8, -7, -257]

export interface RelyingParty {
  rpId: string
  /** the exact origins clientDataJSON may name */
  origins: string[]
  userVerification: 'required' | 'preferred'
}

/** Why a response was refused: for the log and the audit trail only; the client always gets 400 passkey_invalid. */
export class NotVerified extends Error {
  constructor (reason: string, readonly cloneSuspected = false, public userId?: string) {
    super(reason)
  }
}

export interface NewCredential {
  id: string
  publicKey: string
  signCount: number
  backupEligible: boolean
  backedUp: boolean
  aaguid: string
  transports: string[]
}

export interface Assertion { userVerified: boolean, signCount: number, backedUp: boolean }

/**
 * The rules of clientDataJSON that @simplewebauthn/server leaves to the caller: no `crossOrigin:
 * true` (it checks only when `topOrigin` is there too), no `topOrigin` at all, and the origin exactly
 * one of WEBAUTHN_ORIGINS (it checks that too; checked here first, before any CBOR is parsed).
 */
function checkClientData (rp: RelyingParty, encoded: string): void {
  let data: unknown
  try {
    data = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
  } catch {
    throw new NotVerified('clientDataJSON is not JSON')
  }
  if (typeof data !== 'object' || data === null) throw new NotVerified('clientDataJSON is not an object')
  const { origin, crossOrigin, topOrigin } = data as Record<string, unknown>
  if (crossOrigin !== undefined && crossOrigin !== false) throw new NotVerified('crossOrigin')
  if (topOrigin !== undefined) throw new NotVerified('topOrigin')
  if (typeof origin !== 'string' || !rp.origins.includes(origin)) throw new NotVerified('origin not in WEBAUTHN_ORIGINS')
}

async function verified<T> (run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    throw new NotVerified((err as Error).message)
  }
}

/** A registration response for the spent challenge: attestation `none`, UP, UV as the setting says. */
export async function verifyRegistration (rp: RelyingParty, credential: RegistrationCredential, spent: SpentChallenge): Promise<NewCredential> {
  checkClientData(rp, credential.response.clientDataJSON)
  const result = await verified(async () => await verifyRegistrationResponse({
    response: { ...credential, clientExtensionResults: credential.clientExtensionResults },
    expectedChallenge: (challenge) => spent.matches(challenge),
    expectedOrigin: rp.origins,
    expectedRPID: rp.rpId,
    expectedType: 'webauthn.create',
    requireUserPresence: true,
    requireUserVerification: rp.userVerification === 'required',
    supportedAlgorithmIDs: ALGORITHMS
  }))
  if (!result.verified) throw new NotVerified('attestation not verified')
  const info = result.registrationInfo
  if (info.fmt !== 'none') throw new NotVerified(`attestation ${info.fmt}, not none`)
  // the library compares id with rawId, not with the credential ID the authenticator data carries
  if (info.credential.id !== credential.id) throw new NotVerified('credential id differs from the authenticator data')
  return {
    id: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    signCount: info.credential.counter,
    backupEligible: info.credentialDeviceType === 'multiDevice',
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
    transports: credential.response.transports ?? []
  }
}

/**
 * An assertion by `stored` for the spent challenge. The library's sign-count check is turned off
 * (it is given 0) so that a regression, checked here after the signature, is told apart and audited.
 */
export async function verifyAssertion (rp: RelyingParty, credential: AuthenticationCredential, spent: SpentChallenge, stored: StoredPasskey): Promise<Assertion> {
  checkClientData(rp, credential.response.clientDataJSON)
  const result = await verified(async () => await verifyAuthenticationResponse({
    response: credential,
    expectedChallenge: (challenge) => spent.matches(challenge),
    expectedOrigin: rp.origins,
    expectedRPID: rp.rpId,
    expectedType: 'webauthn.get',
    credential: { id: stored.id, publicKey: Buffer.from(stored.publicKey, 'base64url'), counter: 0 },
    requireUserVerification: rp.userVerification === 'required'
  }))
  if (!result.verified) throw new NotVerified('signature not verified')
  const info = result.authenticationInfo
  if ((info.credentialDeviceType === 'multiDevice') !== stored.backupEligible) throw new NotVerified('BE changed since registration')
  if ((stored.signCount !== 0 || info.newCounter !== 0) && info.newCounter <= stored.signCount) {
    throw new NotVerified(`sign count ${info.newCounter} not above ${stored.signCount}`, true)
  }
  return { userVerified: info.userVerified, signCount: info.newCounter, backedUp: info.credentialBackedUp }
}
