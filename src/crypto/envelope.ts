import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { ConfigError } from '../errors.js'

/** One data encryption key: its id travels with every ciphertext it sealed. */
export interface DataKey { id: string, key: Buffer }

const SETTING = 'DATA_ENCRYPTION_KEYS'
const KEY_BYTES = 32
const IV_BYTES = 12
const ID = /^[A-Za-z0-9_-]{1,32}$/

/**
 * `id:base64key[,id:base64key…]` → the keys, the first one first. Each key is exactly 32 bytes
 * (AES-256); ids are unique. A wrong entry throws a ConfigError naming `name`.
 */
export function parseDataKeys (value: string, name = SETTING): DataKey[] {
  const keys: DataKey[] = []
  for (const entry of value.split(',').map((e) => e.trim())) {
    const colon = entry.indexOf(':')
    const id = entry.slice(0, colon)
    const encoded = entry.slice(colon + 1)
    if (colon < 0 || !ID.test(id)) throw new ConfigError(`Invalid configuration: ${name} entries are written id:base64key, ids of letters, digits, _ or - (at most 32)`)
    const key = Buffer.from(encoded, 'base64')
    if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
      throw new ConfigError(`Invalid configuration: ${name} key ${id} must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32)`)
    }
    if (keys.some((k) => k.id === id)) throw new ConfigError(`Invalid configuration: ${name} names key ${id} twice`)
    keys.push({ id, key })
  }
  return keys
}

/** A fresh `id:base64key` entry (the development default). */
export function generateDataKeyEntry (id = 'dev1'): string {
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`
}

/** Why a sealed value could not be opened: its key is not configured, or the key does not open it. */
export class EnvelopeError extends Error {
  constructor (readonly reason: 'unknown_key' | 'undecryptable', readonly keyId: string) {
    super(reason === 'unknown_key' ? `no data encryption key with id ${keyId}` : `data encryption key ${keyId} does not decrypt it`)
  }
}

/**
 * AES-256-GCM sealing for secrets kept at rest (private signing keys; TOTP secrets alike). The
 * first key seals, every key opens, so the list can rotate: add a new key first, keep the old
 * ones until nothing sealed with them is left. A sealed value is `keyId.iv.ciphertext.tag`
 * (base64url), and `context` (what the value belongs to, e.g. a signing key's kid) is bound as
 * additional data: a ciphertext copied onto another row does not open there.
 */
export class Envelope {
  private readonly byId: Map<string, Buffer>

  constructor (private readonly keys: DataKey[]) {
    if (keys.length === 0) throw new Error('an envelope needs at least one key')
    this.byId = new Map(keys.map((k) => [k.id, k.key]))
  }

  seal (plaintext: Buffer | string, context: string): string {
    const { id, key } = this.keys[0] as DataKey
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
    return [id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.')
  }

  open (sealed: string, context: string): Buffer {
    const [id = '', iv = '', ciphertext = '', tag = ''] = sealed.split('.')
    const key = this.byId.get(id)
    if (key === undefined) throw new EnvelopeError('unknown_key', id)
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(context, 'utf8'))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()])
    } catch {
      throw new EnvelopeError('undecryptable', id)
    }
  }
}
