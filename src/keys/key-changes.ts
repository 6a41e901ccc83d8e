import type { SyncFeed } from '../revocations/revocation-sync.js'

/** A signing key created (a rotation, the first key) or revoked, as it travels between instances. */
export interface KeyChange {
  kid: string
  change: 'created' | 'revoked'
}

/** The pub/sub channel of key changes under REDIS_PREFIX, beside the revocations' own. */
export function keyChangeChannel (prefix: string): string {
  return `${prefix}signing-keys`
}

function parse (text: string): KeyChange | undefined {
  let message: Partial<KeyChange>
  try {
    message = JSON.parse(text) as Partial<KeyChange>
  } catch {
    return undefined
  }
  const { kid, change } = message
  if (typeof kid !== 'string' || kid.length > 64 || (change !== 'created' && change !== 'revoked')) return undefined
  return { kid, change }
}

/**
 * The signing keys' own channel (a feed of src/revocations' sync, so it shares its connections,
 * its outage handling and its catch-up): a change made here is announced to the other instances,
 * one made elsewhere is heard. While no broadcast arrives (no Redis, or Redis down) the catch-up
 * reads the `signing_keys` table itself, which the key service compares with what it loaded.
 */
export class KeyChanges implements SyncFeed {
  readonly channel: string
  private readonly publishers: Array<(text: string) => void> = []
  private readonly listeners: Array<(change: KeyChange) => void> = []
  private reader: (() => Promise<void>) | undefined

  constructor (prefix: string) {
    this.channel = keyChangeChannel(prefix)
  }

  /** A change made by this instance. */
  announce (change: KeyChange): void {
    const text = JSON.stringify({ kid: change.kid, change: change.change } satisfies KeyChange)
    for (const publish of this.publishers) publish(text)
  }

  /** Hears every change announced elsewhere (and this instance's own, echoed back by Redis). */
  onHeard (listener: (change: KeyChange) => void): void {
    this.listeners.push(listener)
  }

  /** What reads the keys again when the broadcast may have missed a change. */
  readWith (reader: () => Promise<void>): void {
    this.reader = reader
  }

  onLocal (publish: (text: string) => void): void {
    this.publishers.push(publish)
  }

  receive (text: string): void {
    const change = parse(text)
    if (change === undefined) return
    for (const listener of this.listeners) listener(change)
  }

  async catchUp (): Promise<void> {
    await this.reader?.()
  }
}
