/*
 * A client program written against the fetch client orval generates from GET /openapi.json
 * (test/app/sdk/orval.test.ts generates it into ./client/api.ts beside this file, type-checks both
 * under strict and runs this against a listening server). orval attaches no credentials itself:
 * each call passes its header. Its base URL is the document's `servers` entry. Excluded from the
 * project's own type check: ./client exists only in that temporary folder.
 */
import {
  ErrorResponseCode, getApiUsers, getAuthMe, postApiUsers, postAuthLogin, postAuthLogout, postAuthRefresh, putApiUsersById,
  type ErrorResponse, type TokenResponse, type User, type UserList
} from './client/api.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<T extends true> (_proof?: T): void {}

export interface Seen { status: number, body: unknown, location?: string | null, cookies?: string[] }
const seen = (response: { status: number, data: unknown }): Seen => ({ status: response.status, body: response.data })
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })
const cookieNames = (headers: Headers) => headers.getSetCookie().map((c) => c.split('=')[0] ?? '')

export async function runFlow (admin: { email: string, password: string }, baseUrl: string): Promise<Record<string, Seen>> {
  const result: Record<string, Seen> = {}

  const login = await postAuthLogin({ email: admin.email, password: admin.password, remember: true })
  result.login = { ...seen(login), cookies: cookieNames(login.headers) }
  if (login.status !== 200) return result
  assertType<Equal<typeof login.data, TokenResponse>>()
  assertType<Equal<typeof login.data.user, User>>()
  const token = login.data.access_token
  const refreshCookie = login.headers.getSetCookie().find((c) => c.startsWith('refresh_token='))?.split(';')[0] ?? ''

  const me = await getAuthMe(bearer(token))
  result.me = seen(me)

  const created = await postApiUsers({ email: 'ada@example.com', password: 'First-pass-1', name: 'Ada Lovelace', age: 36 }, bearer(token))
  result.created = { ...seen(created), location: created.headers.get('location') }
  if (created.status !== 201) return result

  const page = await getApiUsers({ page: 2, per_page: 1 }, bearer(token))
  result.page = seen(page)
  if (page.status === 200) assertType<Equal<typeof page.data, UserList>>()

  const updated = await putApiUsersById(created.data.id, { name: 'Augusta Ada King' }, bearer(token))
  result.updated = seen(updated)

  const invalid = await postApiUsers({ email: 'not-an-email', password: 'short', name: 'A' }, bearer(token))
  if (invalid.status === 422) {
    assertType<Equal<typeof invalid.data, ErrorResponse>>()
    const failed: boolean = invalid.data.code === ErrorResponseCode.validation_failed
    result.invalid = { status: invalid.status, body: failed ? { code: invalid.data.code, errors: invalid.data.errors } : invalid.data }
  }

  // by cookie: orval sends Content-Type: application/json and no body; the Origin is a browser's
  const byCookie = await postAuthRefresh(undefined, { headers: { cookie: refreshCookie, origin: baseUrl } })
  result.refreshByCookie = { ...seen(byCookie), cookies: cookieNames(byCookie.headers) }
  if (byCookie.status !== 200) return result
  const byBody = await postAuthRefresh({ refresh_token: byCookie.data.refresh_token })
  result.refreshByBody = seen(byBody)
  if (byBody.status !== 200) return result

  const second = await postAuthLogin({ email: admin.email, password: admin.password })
  if (second.status !== 200) return result
  const others = await postAuthLogout(undefined, { scope: 'others' }, bearer(byBody.data.access_token))
  result.logoutOthers = seen(others)
  result.secondAfterOthers = seen(await getAuthMe(bearer(second.data.access_token)))

  const local = await postAuthLogout({ refresh_token: byBody.data.refresh_token }, { scope: 'local' })
  result.logoutLocal = { ...seen(local), cookies: local.headers.getSetCookie().map((c) => c.split(';')[0] ?? '') }
  result.afterLocal = seen(await getAuthMe(bearer(byBody.data.access_token)))

  const third = await postAuthLogin({ email: admin.email, password: admin.password })
  const fourth = await postAuthLogin({ email: admin.email, password: admin.password })
  if (third.status !== 200 || fourth.status !== 200) return result
  const global = await postAuthLogout(undefined, { scope: 'global' }, bearer(third.data.access_token))
  result.logoutGlobal = seen(global)
  result.afterGlobal = seen(await getAuthMe(bearer(fourth.data.access_token)))
  return result
}
