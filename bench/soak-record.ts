import type { Reply, Send, SoakClient } from './soak-http.js'

/** What one request was for; the report counts each kind. */
export type Kind = 'login' | 'login-wrong' | 'refresh' | 'me' | 'read' | 'list' | 'create' | 'update' | 'delete' | 'logout' | 'verify'

const READS: ReadonlySet<Kind> = new Set(['read', 'list'])
const KEEP_EXAMPLES = 8

/**
 * Every request of the run: counts per kind and per status, and the failures — a 5xx, a network
 * error, or a status the flow did not expect (a 401 for a fresh token is a bug, not load).
 */
export class Recorder {
  readonly kinds = new Map<Kind, number>()
  readonly statuses = new Map<string, number>()
  serverErrors = 0
  /** the 503s of those: under-pressure shedding load because the event loop lagged over 1 s */
  shed = 0
  networkErrors = 0
  unexpected = 0
  readonly examples: string[] = []
  /** [performance.now() at the answer, latency ms] of the successful /api reads */
  readonly reads: Array<[number, number]> = []

  /** While set, `call` sends nothing and answers undefined: the flows wind down at once. */
  draining = false

  /**
   * Sends and records; the reply when its status is `expect`, else undefined (and when draining,
   * so a flow ends its round there; only acknowledged writes are tracked, so none is lost).
   */
  async call (client: SoakClient, kind: Kind, method: string, path: string, send: Send, expect: number): Promise<Reply | undefined> {
    if (this.draining) return undefined
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1)
    let reply: Reply
    try {
      reply = await client.send(method, path, send)
    } catch (err) {
      this.networkErrors++
      this.count('network error')
      this.example(`${kind} ${method} ${path}: ${err instanceof Error ? err.message : String(err)}`)
      return undefined
    }
    this.count(String(reply.status))
    if (READS.has(kind) && reply.status === 200) this.reads.push([performance.now(), reply.ms])
    if (reply.status >= 500) this.serverErrors++
    if (reply.status === 503 && (reply.body as { code?: unknown } | undefined)?.code === 'service_unavailable') this.shed++
    if (reply.status === expect) return reply
    this.unexpected++
    this.example(`${kind} ${method} ${path}: expected ${expect}, got ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 160)}`)
    return undefined
  }

  /** A check the flow makes on a body it got (e.g. the user it reads is the one it wrote). */
  mismatch (what: string): void {
    this.unexpected++
    this.example(what)
  }

  get total (): number {
    let n = 0
    for (const count of this.kinds.values()) n += count
    return n
  }

  private count (key: string): void {
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1)
  }

  private example (line: string): void {
    if (this.examples.length < KEEP_EXAMPLES) this.examples.push(line)
  }
}

/** The last acknowledged state of a user, as the server must return it at the end. */
export interface Expected { email: string, name: string, age: number | null, deleted: boolean }

/**
 * Every successful write, by user id. Each user is written by one client only, sequentially,
 * so the last acknowledged write is the state the server must hold.
 */
export class WriteTracker {
  readonly users = new Map<string, Expected>()
  writes = 0

  created (id: string, state: Omit<Expected, 'deleted'>): void {
    this.writes++
    this.users.set(id, { ...state, deleted: false })
  }

  updated (id: string, change: { name: string, age: number }): void {
    this.writes++
    const current = this.users.get(id)
    if (current !== undefined) this.users.set(id, { ...current, ...change })
  }

  deleted (id: string): void {
    this.writes++
    const current = this.users.get(id)
    if (current !== undefined) this.users.set(id, { ...current, deleted: true })
  }

  get live (): number {
    let n = 0
    for (const user of this.users.values()) if (!user.deleted) n++
    return n
  }
}
