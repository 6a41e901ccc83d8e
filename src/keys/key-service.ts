import type { AuditSink, RequestContext } from '../events.js'
import { ConfigError } from '../errors.js'
import type { KeysConfig } from '../config/keys.js'
import { EnvelopeError, type Envelope } from '../crypto/envelope.js'
import type { StoredSigningKey } from '../db/signing-keys.js'
import type { Store } from '../db/store.js'
import { NotFound, SigningKeysDisabled } from '../errors.js'
import type { CoreLogger } from '../logging/logger.js'
import type { KeyChange, KeyChanges } from './key-changes.js'
import { generatePair, pemOf, type GeneratedPair, type PublicJwk } from './key-pairs.js'
import type { KeyRing, RingKeyMaterial } from './key-ring.js'
import { currentKey, isStandby, keyState, promotable, relink, STANDBY, type KeyState } from './key-states.js'

export interface KeyEntry {
  kid: string
  alg: string
  state: Exclude<KeyState, 'gone'>
  createdAt: string
  /** null for the standby: it signs only once promoted */
  activatesAt: string | null
  retiresAt: string | null
}

export interface KeyServiceOptions {
  store: Store
  config: KeysConfig & { accessTtl: number }
  ring: KeyRing | undefined
  envelope: Envelope | undefined
  audit: AuditSink
  changes: KeyChanges
  /** a key was revoked: tokens it signed that were verified and cached must be verified again */
  onRevoked: () => void
  log: Pick<CoreLogger, 'info' | 'warn'>
}

type Activation = number | 'standby'

const SYSTEM: RequestContext = { ip: 'system' }

/**
 * The asymmetric signing keys: list, rotate, revoke, rotation, and the ring the codec reads.
 * Only keys of the configured JWT_ALG count: changing it makes a new key sign.
 */
export class KeyService {
  private timer: NodeJS.Timeout | undefined
  private readonly handled = new Set<string>()
  private readonly lingerMs: number
  /** a catch-up that reads the same does nothing */
  private loaded = ''

  constructor (private readonly options: KeyServiceOptions) {
    this.lingerMs = (options.config.accessTtl + options.config.jwksMaxAge) * 1000
  }

  get enabled (): boolean {
    return this.options.ring !== undefined
  }

  async start (): Promise<void> {
    const { ring, changes, config } = this.options
    if (ring === undefined) return
    changes.onHeard((change) => { this.heard(change) })
    this.materials(await this.keysOfAlg(), Date.now(), true)
    if (currentKey(await this.keysOfAlg(), Date.now()) === undefined) await this.create(0, 'first')
    if (!(await this.keysOfAlg()).some(isStandby)) await this.create('standby', 'standby')
    await this.reload(true)
    // once the stored keys are known to open: a catch-up never meets a key refused at start
    changes.readWith(async () => { await this.catchUp() })
    const interval = config.jwtKeyRotationInterval
    if (interval === undefined) return
    const everyMs = Math.min(60_000, Math.max(1000, interval * 250))
    this.timer = setInterval(() => { this.rotateIfDue().catch((err) => { this.options.log.warn({ err }, 'automatic key rotation failed') }) }, everyMs)
    this.timer.unref()
  }

  close (): void {
    clearInterval(this.timer)
  }

  async list (): Promise<KeyEntry[]> {
    if (!this.enabled) return []
    const keys = await this.keysOfAlg()
    const now = Date.now()
    const current = currentKey(keys, now)
    const entries: KeyEntry[] = []
    for (const key of keys) {
      const state = keyState(key, current, now)
      if (state !== 'gone') entries.push({ kid: key.kid, alg: key.alg, state, createdAt: key.createdAt, activatesAt: isStandby(key) ? null : key.activatesAt, retiresAt: key.retiresAt })
    }
    return entries
  }

  async rotate (context: RequestContext, actorId?: string): Promise<KeyEntry> {
    if (!this.enabled) throw new SigningKeysDisabled()
    const key = await this.create(this.options.config.jwtKeyPublishLead * 1000, 'rotate') as StoredSigningKey
    this.options.audit({ event: 'signing_key_rotated', actorId, detail: key.kid }, context)
    return { kid: key.kid, alg: key.alg, state: 'next', createdAt: key.createdAt, activatesAt: key.activatesAt, retiresAt: null }
  }

  /**
   * A current key is replaced at once by the standby, which every verifier already holds, or
   * by a new key that signs at once; a new standby takes the place of one promoted or revoked.
   */
  async revoke (kid: string, context: RequestContext, actorId?: string): Promise<void> {
    if (!this.enabled) throw new SigningKeysDisabled()
    const now = Date.now()
    const keys = await this.keysOfAlg()
    const key = keys.find((k) => k.kid === kid)
    if (key === undefined || keyState(key, currentKey(keys, now), now) === 'gone') throw new NotFound('Signing key not found')
    if (key.revokedAt !== null) return
    const { promote, create } = await this.replacementFor(key, keys, now)
    await this.options.store.transaction(async (tx) => {
      const at = new Date(now).toISOString()
      await tx.signingKeys.update(kid, { revokedAt: at, retiresAt: key.retiresAt ?? new Date(now + this.lingerMs).toISOString() })
      if (promote !== undefined) await tx.signingKeys.update(promote, { activatesAt: at })
      // in the same transaction: no instance ever reads a state with no key to sign, or no standby
      let seq = (await tx.signingKeys.list()).at(-1)?.seq ?? 0
      for (const [pair, activation] of create) {
        if (await this.insertKey(tx, pair, activation, ++seq) === undefined) throw new Error('another instance added a signing key at the same moment: revoke again')
      }
      await this.relinkIn(tx, now)
    })
    this.options.audit({ event: 'signing_key_revoked', actorId, detail: kid }, context)
    await this.signal({ kid, change: 'revoked' })
  }

  /** Several instances may find it due at once; one of them rotates. */
  async rotateIfDue (): Promise<void> {
    const interval = this.options.config.jwtKeyRotationInterval
    if (interval === undefined) return
    const all = await this.options.store.signingKeys.list()
    const newest = all.filter((k) => k.alg === this.options.config.jwtAlg && k.revokedAt === null).at(-1)
    if (newest !== undefined && Date.parse(newest.createdAt) + interval * 1000 > Date.now()) return
    // only if no key (of any kind, revoked ones included) was added since this read
    const key = await this.create(this.options.config.jwtKeyPublishLead * 1000, 'auto', all.at(-1)?.seq ?? 0)
    if (key !== undefined) this.options.audit({ event: 'signing_key_rotated', detail: key.kid }, SYSTEM)
  }

  published (): PublicJwk[] {
    return this.options.ring?.published(Date.now()) ?? []
  }

  async reload (starting = false): Promise<void> {
    const { ring } = this.options
    if (ring === undefined) return
    const keys = await this.keysOfAlg()
    ring.set(this.materials(keys, Date.now(), starting))
    this.loaded = loadedFrom(keys)
  }

  async catchUp (): Promise<void> {
    const { ring } = this.options
    if (ring === undefined) return
    const keys = await this.keysOfAlg()
    if (loadedFrom(keys) === this.loaded) return
    for (const key of keys) if (key.revokedAt !== null && ring.has(key.kid)) this.apply(key.kid)
    await this.reload()
  }

  private async keysOfAlg (): Promise<StoredSigningKey[]> {
    const alg = this.options.config.jwtAlg
    return (await this.options.store.signingKeys.list()).filter((k) => k.alg === alg)
  }

  private async replacementFor (key: StoredSigningKey, keys: StoredSigningKey[], now: number): Promise<{ promote?: string, create: Array<[GeneratedPair, Activation]> }> {
    const alg = this.options.ring?.alg ?? 'ES256'
    const others = keys.filter((k) => k.kid !== key.kid)
    const create: Array<[GeneratedPair, Activation]> = []
    const promote = currentKey(keys, now)?.kid === key.kid ? promotable(others, now) : undefined
    if (currentKey(keys, now)?.kid === key.kid && promote === undefined) create.push([await generatePair(alg), 0])
    if (!others.some((k) => k !== promote && isStandby(k))) create.push([await generatePair(alg), 'standby'])
    return { promote: promote?.kid, create }
  }

  private async relinkIn (tx: Store, now: number): Promise<void> {
    const keys = (await tx.signingKeys.list()).filter((k) => k.alg === this.options.config.jwtAlg)
    for (const change of relink(keys, this.lingerMs, now)) await tx.signingKeys.update(change.kid, { retiresAt: change.retiresAt })
  }

  /**
   * Instances adding a key at once compete for the next `seq`; the loser of an automatic rotation,
   * first key or standby creates nothing, the loser of a requested rotation goes after the winner.
   */
  private async create (activation: Activation, mode: 'first' | 'standby' | 'rotate' | 'auto', afterSeq?: number): Promise<StoredSigningKey | undefined> {
    const { ring, envelope, store } = this.options
    if (ring === undefined || envelope === undefined) throw new SigningKeysDisabled()
    const pair = await generatePair(ring.alg)
    for (let attempt = 0; attempt < 5; attempt++) {
      const created = await store.transaction(async (tx) => {
        const last = (await tx.signingKeys.list()).at(-1)?.seq ?? 0
        if (afterSeq !== undefined && last !== afterSeq) return undefined
        return await this.insertKey(tx, pair, activation, last + 1)
      })
      if (created !== undefined) {
        await this.signal({ kid: created.kid, change: 'created' })
        return created
      }
      const keys = await this.keysOfAlg()
      if (mode === 'auto' || (mode === 'first' && currentKey(keys, Date.now()) !== undefined) || (mode === 'standby' && keys.some(isStandby))) {
        await this.reload()
        return undefined
      }
    }
    throw new Error('could not store a new signing key: other instances kept adding keys')
  }

  private async insertKey (tx: Store, pair: GeneratedPair, activation: Activation, seq: number): Promise<StoredSigningKey | undefined> {
    const { ring, envelope } = this.options as { ring: KeyRing, envelope: Envelope }
    const now = Date.now()
    const key: StoredSigningKey = {
      kid: pair.kid,
      seq,
      alg: ring.alg,
      publicJwk: JSON.stringify(pair.publicJwk),
      privateKey: envelope.seal(pair.privateDer, pair.kid),
      createdAt: new Date(now).toISOString(),
      activatesAt: activation === 'standby' ? STANDBY : new Date(now + activation).toISOString(),
      retiresAt: null,
      revokedAt: null
    }
    if (!await tx.signingKeys.insert(key)) return undefined
    await this.relinkIn(tx, now)
    return key
  }

  private async signal (change: KeyChange): Promise<void> {
    this.handled.add(`${change.kid}:${change.change}`)
    this.apply(change.change === 'revoked' ? change.kid : undefined)
    await this.reload()
    this.options.changes.announce(change)
  }

  private heard ({ kid, change }: KeyChange): void {
    if (this.handled.has(`${kid}:${change}`)) return
    this.handled.add(`${kid}:${change}`)
    this.apply(change === 'revoked' ? kid : undefined)
    this.reload().catch((err) => { this.options.log.warn({ err }, 'reloading the signing keys failed') })
  }

  private apply (revokedKid: string | undefined): void {
    if (revokedKid === undefined) return
    this.options.ring?.drop(revokedKid)
    this.options.onRevoked()
  }

  private materials (keys: StoredSigningKey[], now: number, starting: boolean): RingKeyMaterial[] {
    const current = currentKey(keys, now)
    const out: RingKeyMaterial[] = []
    for (const key of keys) {
      const state = keyState(key, current, now)
      if (state === 'gone' || state === 'revoked') continue
      try {
        const jwk = JSON.parse(key.publicJwk) as PublicJwk
        const der = (this.options.envelope as Envelope).open(key.privateKey, key.kid)
        out.push({ kid: key.kid, seq: key.seq, activatesAt: key.activatesAt, retiresAt: key.retiresAt, jwk, ...pemOf(jwk, der) })
      } catch (err) {
        if (!(err instanceof EnvelopeError) || !starting) throw err
        throw new ConfigError(err.reason === 'unknown_key'
          ? `Invalid configuration: DATA_ENCRYPTION_KEYS has no key ${err.keyId}, which encrypted signing key ${key.kid}`
          : `Invalid configuration: DATA_ENCRYPTION_KEYS key ${err.keyId} does not decrypt signing key ${key.kid} (a different key under the same id?)`)
      }
    }
    return out
  }
}

function loadedFrom (keys: StoredSigningKey[]): string {
  return keys.map((k) => `${k.kid} ${k.activatesAt} ${k.retiresAt ?? ''} ${k.revokedAt ?? ''}`).join('\n')
}
