import type { Test } from 'tap'
import { tokenResponse } from '../../helper.js'
import { ISO, JWT, REVOKED } from '../../patterns.js'

/*
 * What each generated client's flow (test/app/sdk/clients/*.ts) must have seen, step by step: the
 * same server answers whichever generator wrote the client.
 */
export type Flow = Record<string, { status: number, body: unknown, location?: string | null, cookies?: string[] } | undefined>

function assertPair (t: Test, body: unknown, user: Record<string, unknown>, step: string): void {
  const pair = body as Record<string, unknown>
  t.match(pair, { access_token: JWT, refresh_token: JWT, expires_at: ISO, refresh_expires_at: ISO, expires_in: Number }, step)
  t.strictSame(pair, tokenResponse(pair, user), step)
}

export function assertFlow (t: Test, seen: Flow, adminId: string): void {
  const admin = (seen.login?.body as { user: Record<string, unknown> }).user
  t.match(admin, { id: adminId, email: 'admin@example.com', name: 'Admin', age: null, created_at: ISO, updated_at: ISO, roles: ['admin'], is_superuser: false, email_verified: false })
  t.equal(seen.login?.status, 200)
  assertPair(t, seen.login?.body, admin, 'login')
  t.same(seen.login?.cookies, ['access_token', 'refresh_token'], 'remember: true sets the cookie pair')

  t.same(seen.me, { status: 200, body: admin })

  const created = seen.created?.body as Record<string, unknown>
  t.equal(seen.created?.status, 201)
  t.equal(seen.created?.location, `/api/users/${String(created.id)}`)
  const ada = { id: created.id, email: 'ada@example.com', name: 'Ada Lovelace', age: 36, created_at: created.created_at, updated_at: created.updated_at, roles: ['user'], is_superuser: false, email_verified: false }
  t.strictSame(created, ada)

  t.same(seen.page, { status: 200, body: { data: [ada], pagination: { current_page: 2, per_page: 1, total: 2, last_page: 2, from: 2, to: 2 } } })

  const updated = seen.updated?.body as Record<string, unknown>
  t.equal(seen.updated?.status, 200)
  t.strictSame(updated, { ...ada, name: 'Augusta Ada King', updated_at: updated.updated_at })

  t.same(seen.invalid, {
    status: 422,
    body: {
      code: 'validation_failed',
      errors: {
        email: ['The email field must be a valid email address'],
        password: ['The password field must be at least 8 characters'],
        name: ['The name field must be at least 2 characters']
      }
    }
  })

  t.equal(seen.refreshByCookie?.status, 200, 'refresh by cookie, with an empty JSON body')
  assertPair(t, seen.refreshByCookie?.body, admin, 'refresh by cookie')
  t.same(seen.refreshByCookie?.cookies, ['access_token', 'refresh_token'], 'a cookie refresh sets the new pair')
  t.equal(seen.refreshByBody?.status, 200, 'refresh by body')
  assertPair(t, seen.refreshByBody?.body, admin, 'refresh by body')

  t.equal(seen.logoutOthers?.status, 204, 'logout scope=others by bearer, with an empty JSON body')
  t.same(seen.secondAfterOthers, { status: 401, body: REVOKED })
  t.equal(seen.logoutLocal?.status, 204, 'logout scope=local by refresh token')
  t.same(seen.logoutLocal?.cookies, ['access_token=', 'refresh_token='], 'the cookies are cleared')
  t.same(seen.afterLocal, { status: 401, body: REVOKED })
  t.equal(seen.logoutGlobal?.status, 204, 'logout scope=global by bearer')
  t.same(seen.afterGlobal, { status: 401, body: REVOKED })
}
