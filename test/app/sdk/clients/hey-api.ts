/*
 * A client program written against the SDK @hey-api/openapi-ts generates from GET /openapi.json
 * (test/app/sdk/hey-api.test.ts generates it into ./client beside this file, type-checks both under
 * strict and runs this against a listening server). The credentials are attached by the SDK
 * from each operation's declared security, through the one `auth` callback. Excluded from the
 * project's own type check: ./client exists only in that temporary folder.
 */
import { client } from './client/client.gen.js'
import { getApiUsers, getAuthMe, postApiUsers, postAuthLogin, postAuthLogout, postAuthRefresh, putApiUsersById } from './client/index.js'
import type { ErrorResponse, TokenResponse, User, UserList } from './client/index.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<T extends true> (_proof?: T): void {}

export interface Seen { status: number, body: unknown, location?: string | null, cookies?: string[] }
const seen = (response: Response | undefined, body: unknown): Seen => ({ status: response?.status ?? 0, body })

/** The credentials the SDK may attach, by security scheme: what this program holds at each step. */
const held: { bearer?: string, refreshCookie?: string } = {}
/** The refresh cookie a response set, if any. */
const refreshCookieOf = (response: Response): string | undefined =>
  response.headers.getSetCookie().find((c) => c.startsWith('refresh_token='))?.split(';')[0]?.slice('refresh_token='.length)

/** GET /auth/me with this access token: what a session that may be over answers. */
async function meWith (token: string): Promise<Seen> {
  held.bearer = token
  const me = await getAuthMe()
  return seen(me.response, me.error ?? me.data)
}

export async function runFlow (admin: { email: string, password: string }): Promise<Record<string, Seen>> {
  // the base URL is the generated default: the document's `servers` entry
  const baseUrl = client.getConfig().baseUrl ?? ''
  client.setConfig({ auth: (auth) => (auth.scheme === 'bearer' ? held.bearer : auth.name === 'refresh_token' ? held.refreshCookie : undefined) })
  const result: Record<string, Seen> = {}
  const origin = { origin: baseUrl }

  const login = await postAuthLogin({ body: { email: admin.email, password: admin.password, remember: true } })
  result.login = { ...seen(login.response, login.data), cookies: login.response.headers.getSetCookie().map((c) => c.split('=')[0] ?? '') }
  if (login.data === undefined) return result
  assertType<Equal<typeof login.data, TokenResponse>>()
  assertType<Equal<typeof login.data.user, User>>()
  held.bearer = login.data.access_token
  held.refreshCookie = refreshCookieOf(login.response)

  const me = await getAuthMe()
  result.me = seen(me.response, me.data)

  const created = await postApiUsers({ body: { email: 'ada@example.com', password: 'First-pass-1', name: 'Ada Lovelace', age: 36 } })
  result.created = { ...seen(created.response, created.data), location: created.response.headers.get('location') }
  if (created.data === undefined) return result

  const page = await getApiUsers({ query: { page: 2, per_page: 1 } })
  result.page = seen(page.response, page.data)
  assertType<Equal<typeof page.data, UserList | undefined>>()

  const updated = await putApiUsersById({ path: { id: created.data.id }, body: { name: 'Augusta Ada King' } })
  result.updated = seen(updated.response, updated.data)

  const invalid = await postApiUsers({ body: { email: 'not-an-email', password: 'short', name: 'A' } })
  assertType<Equal<typeof invalid.error, ErrorResponse | undefined>>()
  const code: ErrorResponse['code'] | undefined = invalid.error?.code
  result.invalid = { ...seen(invalid.response, invalid.error), body: { code, errors: invalid.error?.errors } }

  // by cookie: no body at all (the SDK still sends Content-Type: application/json), and the Origin a browser would send
  const byCookie = await postAuthRefresh({ headers: origin })
  result.refreshByCookie = { ...seen(byCookie.response, byCookie.data), cookies: byCookie.response.headers.getSetCookie().map((c) => c.split('=')[0] ?? '') }
  if (byCookie.data === undefined) return result
  held.refreshCookie = undefined
  const byBody = await postAuthRefresh({ body: { refresh_token: byCookie.data.refresh_token } })
  result.refreshByBody = seen(byBody.response, byBody.data)
  if (byBody.data === undefined) return result

  // a second session, then scope=others from the first: the second is over
  const second = await postAuthLogin({ body: { email: admin.email, password: admin.password } })
  if (second.data === undefined) return result
  held.bearer = byBody.data.access_token
  result.logoutOthers = seen((await postAuthLogout({ query: { scope: 'others' } })).response, undefined)
  result.secondAfterOthers = await meWith(second.data.access_token)

  // scope=local with the refresh token in the body: this session is over, the cookies cleared
  held.bearer = undefined
  const local = await postAuthLogout({ query: { scope: 'local' }, body: { refresh_token: byBody.data.refresh_token } })
  result.logoutLocal = { ...seen(local.response, local.data), cookies: local.response.headers.getSetCookie().map((c) => c.split(';')[0] ?? '') }
  result.afterLocal = await meWith(byBody.data.access_token)

  // scope=global by bearer: every session of the user is over
  const third = await postAuthLogin({ body: { email: admin.email, password: admin.password } })
  const fourth = await postAuthLogin({ body: { email: admin.email, password: admin.password } })
  if (third.data === undefined || fourth.data === undefined) return result
  held.bearer = third.data.access_token
  result.logoutGlobal = seen((await postAuthLogout({ query: { scope: 'global' } })).response, undefined)
  result.afterGlobal = await meWith(fourth.data.access_token)
  return result
}
