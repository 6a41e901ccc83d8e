import type { FlowContext } from './soak-flows.js'
import type { SoakClient } from './soak-http.js'
import type { Expected } from './soak-record.js'

export interface Verification {
  checked: number
  deleted: number
  /** what did not match, first few */
  problems: string[]
  mismatches: number
  listTotal: number | undefined
  expectedTotal: number
}

function differs (body: Record<string, unknown> | undefined, want: Expected): boolean {
  return body === undefined || body.email !== want.email || body.name !== want.name || body.age !== want.age
}

/**
 * After the load: every acknowledged write is read back — a live user with its last name and
 * age, a deleted one as 404 — and the list's total is the number of users that must exist.
 */
export async function verifyWrites (ctx: FlowContext, client: SoakClient, token: string): Promise<Verification> {
  // the bootstrapped admin, and every user created through the API and not deleted
  const result: Verification = { checked: 0, deleted: 0, problems: [], mismatches: 0, listTotal: undefined, expectedTotal: 1 + ctx.tracker.live }
  const problem = (line: string) => {
    result.mismatches++
    if (result.problems.length < 5) result.problems.push(line)
  }
  for (const [id, want] of ctx.tracker.users) {
    result.checked++
    if (want.deleted) result.deleted++
    const reply = await ctx.recorder.call(client, 'verify', 'GET', `/api/users/${id}`, { token }, want.deleted ? 404 : 200)
    if (reply === undefined) problem(`user ${id}: not as written (${want.deleted ? 'deleted' : 'live'})`)
    else if (!want.deleted && differs(reply.body as Record<string, unknown>, want)) {
      problem(`user ${id}: wrote ${JSON.stringify(want)}, read ${JSON.stringify(reply.body)}`)
    }
  }
  const list = await ctx.recorder.call(client, 'verify', 'GET', '/api/users?per_page=1', { token }, 200)
  const total = (list?.body as { pagination?: { total?: number } } | undefined)?.pagination?.total
  result.listTotal = total
  if (total !== result.expectedTotal) problem(`GET /api/users counts ${String(total)} users, ${result.expectedTotal} expected`)
  return result
}
