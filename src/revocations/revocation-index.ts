export type RevocationListener = (sessionId: string, expiresAtMs: number) => void

/**
 * Revoked session ids held in memory, so the access check is a Map lookup and never a database
 * read. Loaded from the `revocations` table at start and fed by every revocation; an entry is
 * kept only until no access token of its session can still be valid, so the map stays bounded.
 * Revocations made here are passed to the listeners (the broadcast to other instances); those
 * learnt from elsewhere are not, so nothing echoes back and forth.
 */
export class RevocationIndex {
  private readonly revoked = new Map<string, number>()
  private readonly listeners: RevocationListener[] = []

  /** A revocation made by this instance. */
  add (sessionId: string, expiresAtMs: number): void {
    this.learn(sessionId, expiresAtMs)
    for (const listener of this.listeners) listener(sessionId, expiresAtMs)
  }

  /** A revocation made elsewhere (another instance, or read from the database). */
  learn (sessionId: string, expiresAtMs: number): void {
    const current = this.revoked.get(sessionId)
    if (current === undefined || current < expiresAtMs) this.revoked.set(sessionId, expiresAtMs)
  }

  onAdd (listener: RevocationListener): void {
    this.listeners.push(listener)
  }

  has (sessionId: string): boolean {
    return this.revoked.has(sessionId)
  }

  prune (nowMs: number): void {
    for (const [sessionId, expiresAt] of this.revoked) {
      if (expiresAt <= nowMs) this.revoked.delete(sessionId)
    }
  }

  get size (): number {
    return this.revoked.size
  }
}
