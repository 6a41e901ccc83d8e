import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

/*
 * A software authenticator for the passkey tests and the bench: node:crypto P-256 keys (ES256),
 * `fmt: "none"` attestation in a CBOR encoder of its own (the few types WebAuthn needs). It makes
 * what a browser will not: a wrong origin, `crossOrigin: true`, a `topOrigin`, another RP ID's
 * hash, UV or UP off, BE flipped, a sign count going back, another user's handle.
 */

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>

function head (major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length])
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff])
  const out = Buffer.alloc(5)
  out[0] = (major << 5) | 26
  out.writeUInt32BE(length, 1)
  return out
}

/** Definite-length CBOR (RFC 8949) of integers, text, bytes and maps. */
export function cbor (value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8')
    return Buffer.concat([head(3, text.length), text])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

export interface Flags { up?: boolean, uv?: boolean, be?: boolean, bs?: boolean }

/** What a ceremony's client and authenticator may be told to get wrong. */
export interface Twist extends Flags {
  origin?: string
  crossOrigin?: boolean
  topOrigin?: string
  rpId?: string
  type?: string
  challenge?: string
  signCount?: number
  userHandle?: string | null
  fmt?: string
}

export interface SoftCredential { id: Buffer, privateKey: KeyObject, cose: Buffer, userHandle: string, signCount: number }

interface CreationOptions { challenge: string, rp: { id?: string }, user: { id: string } }
interface RequestOptions { challenge: string, rpId?: string }

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = []
  readonly aaguid = Buffer.alloc(16)

  /**
   * `flags`: what it reports by default (UV and UP on, BE/BS off); `counting` false keeps every
   * sign count 0, as synced passkeys do
   */
  constructor (readonly origin: string, readonly flags: Flags = {}, readonly counting = true) {}

  private flagByte (twist: Twist, attested: boolean): number {
    const f = { up: true, uv: true, be: false, bs: false, ...this.flags, ...twist }
    return (f.up ? 0x01 : 0) | (f.uv ? 0x04 : 0) | (f.be ? 0x08 : 0) | (f.bs ? 0x10 : 0) | (attested ? 0x40 : 0)
  }

  private clientData (type: string, challenge: string, twist: Twist): Buffer {
    const data: Record<string, unknown> = { type: twist.type ?? type, challenge: twist.challenge ?? challenge, origin: twist.origin ?? this.origin, crossOrigin: twist.crossOrigin ?? false }
    if (twist.topOrigin !== undefined) data.topOrigin = twist.topOrigin
    return Buffer.from(JSON.stringify(data))
  }

  private authData (rpId: string, flags: number, signCount: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(signCount)
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested === undefined ? [] : [attested])])
  }

  /** navigator.credentials.create(), as its JSON: a new P-256 credential for the options' user (or `reuse`'s key and ID again). */
  create (options: CreationOptions, twist: Twist = {}, reuse?: SoftCredential): Record<string, unknown> {
    const credential = reuse ?? this.newCredential(options.user.id, twist.signCount ?? 0)
    const { id, cose } = credential
    const idLength = Buffer.from([id.length >> 8, id.length & 0xff])
    const authData = this.authData(twist.rpId ?? options.rp.id ?? '', this.flagByte(twist, true), credential.signCount, Buffer.concat([this.aaguid, idLength, id, cose]))
    const attestationObject = cbor(new Map<string, Cbor>([['fmt', twist.fmt ?? 'none'], ['attStmt', new Map()], ['authData', authData]]))
    if (reuse === undefined) this.credentials.push(credential)
    return {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(this.clientData('webauthn.create', options.challenge, twist)),
        attestationObject: b64(attestationObject),
        transports: ['internal']
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: { credProps: { rk: true } }
    }
  }

  private newCredential (userHandle: string, signCount: number): SoftCredential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    const cose = cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x ?? '', 'base64url')], [-3, Buffer.from(jwk.y ?? '', 'base64url')]]))
    return { id: randomBytes(16), privateKey, cose, userHandle, signCount }
  }

  /** navigator.credentials.get(), as its JSON: an assertion by `credential` (the newest by default); the count rises by one unless told. */
  get (options: RequestOptions, twist: Twist = {}, credential = this.credentials.at(-1)): Record<string, unknown> {
    if (credential === undefined) throw new Error('the authenticator holds no credential')
    credential.signCount = twist.signCount ?? (this.counting ? credential.signCount + 1 : 0)
    const authData = this.authData(twist.rpId ?? options.rpId ?? '', this.flagByte(twist, false), credential.signCount)
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, twist)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey)
    const userHandle = twist.userHandle === undefined ? credential.userHandle : twist.userHandle
    return {
      id: b64(credential.id),
      rawId: b64(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authData),
        signature: b64(signature),
        ...(userHandle === null ? {} : { userHandle })
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {}
    }
  }
}
