/*
 * A client program written against the SDK generated from GET /openapi.json. test/app/sdk.test.ts
 * copies it next to the generated `schema.d.ts`, type-checks it (strict) and runs it against a
 * listening server. It is excluded from the project's own type check: `./schema.js` exists only
 * in that temporary folder.
 */
import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

/** True when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only when its argument is `true`: a compile-time assertion. */
function assertType<T extends true> (_proof?: T): void {}

interface Seen { status: number, body: unknown, location?: string | null }

const seen = (response: Response, body: unknown): Seen => ({ status: response.status, body })

export async function runFlow (baseUrl: string, admin: { email: string, password: string }): Promise<Record<string, Seen>> {
  const client = createClient<paths>({ baseUrl })
  const result: Record<string, Seen> = {}

  const login = await client.POST('/auth/login', { body: { email: admin.email, password: admin.password } })
  result.login = seen(login.response, login.data)
  if (login.data === undefined) return result
  const bearer = { authorization: `Bearer ${login.data.access_token}` }
  assertType<Equal<typeof login.data.token_type, 'Bearer'>>()
  assertType<Equal<typeof login.data.user.age, number | null>>()

  const me = await client.GET('/auth/me', { headers: bearer })
  result.me = seen(me.response, me.data)

  const created = await client.POST('/api/users', {
    headers: bearer,
    body: { email: 'Ada@Example.com ', password: 'First-pass-1', name: 'Ada Lovelace', age: 36 }
  })
  result.created = { ...seen(created.response, created.data), location: created.response.headers.get('location') }
  if (created.data === undefined) return result
  const id: string = created.data.id

  const list = await client.GET('/api/users', { headers: bearer, params: { query: { page: 1, per_page: 10 } } })
  result.list = seen(list.response, list.data)
  assertType<Equal<NonNullable<typeof list.data>['pagination']['last_page'], number>>()

  const updated = await client.PUT('/api/users/{id}', { headers: bearer, params: { path: { id } }, body: { name: 'Augusta Ada King', age: 37 } })
  result.updated = seen(updated.response, updated.data)

  const userLogin = await client.POST('/api/auth/login', { body: { email: 'ada@example.com', password: 'First-pass-1' } })
  result.userLogin = seen(userLogin.response, userLogin.data)
  if (userLogin.data === undefined) return result
  const userBearer = { authorization: `Bearer ${userLogin.data.access_token}` }

  const changed = await client.POST('/api/auth/change-password', {
    headers: userBearer,
    body: { current_password: 'First-pass-1', new_password: 'Second-pass-2' }
  })
  result.changed = seen(changed.response, changed.data)

  const oldPassword = await client.POST('/auth/login', { body: { email: 'ada@example.com', password: 'First-pass-1' } })
  result.oldPassword = seen(oldPassword.response, oldPassword.error)

  const refreshed = await client.POST('/auth/refresh', { body: { refresh_token: userLogin.data.refresh_token } })
  result.refreshed = seen(refreshed.response, refreshed.data)
  if (refreshed.data === undefined) return result

  const loggedOut = await client.POST('/auth/logout', { headers: { authorization: `Bearer ${refreshed.data.access_token}` } })
  result.loggedOut = seen(loggedOut.response, loggedOut.data)

  const afterLogout = await client.GET('/auth/me', { headers: { authorization: `Bearer ${refreshed.data.access_token}` } })
  result.afterLogout = seen(afterLogout.response, afterLogout.error)

  const invalid = await client.POST('/api/users', { headers: bearer, body: { email: 'not-an-email', password: 'short', name: 'A' } })
  result.invalid = seen(invalid.response, invalid.error)
  // the documented 422 shape: `errors` maps a field to its messages
  assertType<Equal<NonNullable<typeof invalid.error>['errors'], Record<string, string[]> | undefined>>()
  const messages: string[] = invalid.error?.errors?.email ?? []
  result.invalidEmailMessages = { status: invalid.response.status, body: messages }

  return result
}
