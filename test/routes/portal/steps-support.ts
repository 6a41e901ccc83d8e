import type { FastifyInstance } from 'fastify'
import { Envelope } from '../../../src/crypto/envelope.js'
import type { AuditEntry } from '../../../src/db/audit-events.js'
import { FlowCookie, type FlowStep } from '../../../src/portal/flow.js'
import type { TestContext } from '../../helper.js'
import { totpApp, testClock } from '../auth/two-factor/support.js'
import { portalValues } from './support.js'

/*
 * What the suites of the sign-in steps share: a portal with TOTP on (codes from Debian's oathtool,
 * on a clock the test sets), the sealed flow cookie opened and sealed with the app's own key, and
 * the audit rows as GET /api/audit lists them.
 */

export async function totpPortalApp (t: TestContext, values: Record<string, unknown> = {}): Promise<Awaited<ReturnType<typeof totpApp>>> {
  return await totpApp(t, portalValues(values), testClock())
}

/** The flow cookie of this app, as the portal seals it; `clock` seals one that is already past its time. */
export function flowCookieOf (app: FastifyInstance, clock: () => number = Date.now): FlowCookie {
  const keys = app.config.dataEncryptionKeys
  if (keys === undefined) throw new Error('no data encryption keys')
  return new FlowCookie(new Envelope(keys), clock)
}

export function openFlow (app: FastifyInstance, cookie: string | undefined): FlowStep | undefined {
  return flowCookieOf(app).open(cookie)
}

/** The audit rows of `event`, oldest first, once written. */
export async function auditRows (app: FastifyInstance, event: string): Promise<AuditEntry[]> {
  const { entries } = await app.auditTrail.page({ event }, 1, 100)
  return entries.reverse()
}
