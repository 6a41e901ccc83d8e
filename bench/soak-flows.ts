import { SoakClient, type Reply } from './soak-http.js'
import type { Recorder, WriteTracker } from './soak-record.js'

/** What every flow shares: where to go, where to record, and when to stop. */
export interface FlowContext {
  url: URL
  recorder: Recorder
  tracker: WriteTracker
  stopped: () => boolean
  /** logins sent and not yet answered, over all flows (the argon2 pool's queue, seen from outside) */
  loginsInFlight: number
}

export interface Account { id: string, email: string, password: string }

interface Tokens { access_token: string, refresh_token: string }

const WRONG_PASSWORD = 'Wrong-Password-9!'
export const CREATED_PASSWORD = 'Soak-Password-1!'
// well inside the 15 min access lifetime, so a long soak never sends an expired token
const SESSION_REFRESH_MS = 60_000
const READER_PAUSE_MS = 5

function tokensOf (reply: Reply | undefined): Tokens | undefined {
  const body = reply?.body as Partial<Tokens> | undefined
  return body?.access_token !== undefined && body.refresh_token !== undefined ? body as Tokens : undefined
}

function fieldOf (reply: Reply | undefined, field: 'id' | 'name'): unknown {
  return (reply?.body as Record<string, unknown> | undefined)?.[field]
}

const pause = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function login (ctx: FlowContext, client: SoakClient, { email, password }: { email: string, password: string }, expect = 200): Promise<Reply | undefined> {
  ctx.loginsInFlight++
  try {
    return await ctx.recorder.call(client, expect === 200 ? 'login' : 'login-wrong', 'POST', '/auth/login', { body: { email, password } }, expect)
  } finally {
    ctx.loginsInFlight--
  }
}

/** A signed-in client that rotates its refresh token now and then, as a long-lived app does. */
export class Session {
  private refreshedAt = Date.now()
  private constructor (private readonly ctx: FlowContext, readonly client: SoakClient, private tokens: Tokens) {}

  static async open (ctx: FlowContext, account: { email: string, password: string }): Promise<Session> {
    const client = new SoakClient(ctx.url)
    const tokens = tokensOf(await login(ctx, client, account))
    if (tokens === undefined) {
      client.close()
      throw new Error(`could not sign in as ${account.email}`)
    }
    return new Session(ctx, client, tokens)
  }

  async token (): Promise<string> {
    if (Date.now() - this.refreshedAt > SESSION_REFRESH_MS) {
      this.refreshedAt = Date.now()
      const next = tokensOf(await this.ctx.recorder.call(this.client, 'refresh', 'POST', '/auth/refresh', { body: { refresh_token: this.tokens.refresh_token } }, 200))
      if (next !== undefined) this.tokens = next
    }
    return this.tokens.access_token
  }

  close (): void {
    this.client.close()
  }
}

/** A user's whole visit: sign in (sometimes mistyped first), look, edit themself, refresh, sign out. */
async function userRound (ctx: FlowContext, client: SoakClient, account: Account, round: number): Promise<void> {
  const r = ctx.recorder
  if (round % 4 === 0) await login(ctx, client, { email: account.email, password: WRONG_PASSWORD }, 401)
  const first = tokensOf(await login(ctx, client, account))
  if (first === undefined) return
  const me = await r.call(client, 'me', 'GET', '/auth/me', { token: first.access_token }, 200)
  if (me !== undefined && fieldOf(me, 'id') !== account.id) r.mismatch(`/auth/me for ${account.id} answered ${String(fieldOf(me, 'id'))}`)
  await r.call(client, 'read', 'GET', `/api/users/${account.id}`, { token: first.access_token }, 200)
  const change = { name: `Soak user ${round}`, age: 18 + (round % 100) }
  if (await r.call(client, 'update', 'PUT', `/api/users/${account.id}`, { token: first.access_token, body: change }, 200)) ctx.tracker.updated(account.id, change)
  // a plain user may not list users
  await r.call(client, 'list', 'GET', '/api/users', { token: first.access_token }, 403)
  const next = tokensOf(await r.call(client, 'refresh', 'POST', '/auth/refresh', { body: { refresh_token: first.refresh_token } }, 200))
  if (next === undefined) return
  await r.call(client, 'me', 'GET', '/auth/me', { token: next.access_token }, 200)
  await r.call(client, 'logout', 'POST', '/auth/logout', { body: { refresh_token: next.refresh_token } }, 204)
  // revocation is immediate (docs/api.md#revocation), so the session's access token is refused at once
  await r.call(client, 'me', 'GET', '/auth/me', { token: next.access_token }, 401)
}

export async function userFlow (ctx: FlowContext, account: Account): Promise<void> {
  const client = new SoakClient(ctx.url)
  try {
    for (let round = 0; !ctx.stopped(); round++) await userRound(ctx, client, account, round)
  } finally {
    client.close()
  }
}

/** An admin's round: create a user, read it back, edit it, page through the list, delete every other one. */
async function adminRound (ctx: FlowContext, session: Session, tag: string, round: number): Promise<void> {
  const r = ctx.recorder
  const token = await session.token()
  const account = { email: `soak-${tag}-${round}@example.com`, password: CREATED_PASSWORD, name: `Soak created ${round}`, age: 30 }
  const created = await r.call(session.client, 'create', 'POST', '/api/users', { token, body: account }, 201)
  const id = fieldOf(created, 'id')
  if (typeof id !== 'string') return
  ctx.tracker.created(id, { email: account.email, name: account.name, age: account.age })
  const read = await r.call(session.client, 'read', 'GET', `/api/users/${id}`, { token }, 200)
  if (read !== undefined && fieldOf(read, 'name') !== account.name) r.mismatch(`user ${id} read back as ${JSON.stringify(read.body)}`)
  const change = { name: `Soak updated ${round}`, age: 40 + (round % 50) }
  if (await r.call(session.client, 'update', 'PUT', `/api/users/${id}`, { token, body: change }, 200)) ctx.tracker.updated(id, change)
  await r.call(session.client, 'list', 'GET', `/api/users?page=${1 + (round % 5)}&per_page=20`, { token }, 200)
  if (round % 2 === 1) {
    if (await r.call(session.client, 'delete', 'DELETE', `/api/users/${id}`, { token }, 204)) ctx.tracker.deleted(id)
    await r.call(session.client, 'read', 'GET', `/api/users/${id}`, { token }, 404)
  }
}

export async function adminFlow (ctx: FlowContext, admin: { email: string, password: string }, tag: string): Promise<void> {
  const session = await Session.open(ctx, admin)
  try {
    for (let round = 0; !ctx.stopped(); round++) await adminRound(ctx, session, tag, round)
  } finally {
    session.close()
  }
}

/** Steady, paced /api reads (one user, then the list): the latency probe. */
export async function readerFlow (ctx: FlowContext, admin: { email: string, password: string }, ids: string[]): Promise<void> {
  const session = await Session.open(ctx, admin)
  try {
    for (let round = 0; !ctx.stopped(); round++) {
      const token = await session.token()
      if (round % 4 === 3) await ctx.recorder.call(session.client, 'list', 'GET', '/api/users?per_page=15', { token }, 200)
      else await ctx.recorder.call(session.client, 'read', 'GET', `/api/users/${ids[round % ids.length] ?? ''}`, { token }, 200)
      await pause(READER_PAUSE_MS)
    }
  } finally {
    session.close()
  }
}

/** Back-to-back sign-in and sign-out: with more of these than pool threads, argon2 never idles. */
export async function stormFlow (ctx: FlowContext, account: Account): Promise<void> {
  const client = new SoakClient(ctx.url)
  try {
    while (!ctx.stopped()) {
      const tokens = tokensOf(await login(ctx, client, account))
      if (tokens !== undefined) await ctx.recorder.call(client, 'logout', 'POST', '/auth/logout', { body: { refresh_token: tokens.refresh_token } }, 204)
    }
  } finally {
    client.close()
  }
}
