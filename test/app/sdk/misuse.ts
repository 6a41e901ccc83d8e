/*
 * Misuses of the generated SDK that the type check must refuse, one per marked line: the proof
 * that test/app/sdk.test.ts's type check is real. Never run.
 */
import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' })

export async function misuse (): Promise<void> {
  const invalid = await client.POST('/api/users', { body: { email: 'a@b.co', password: 'long-enough', name: 'Al' } })
  const counts: Record<string, number[]> | undefined = invalid.error?.errors // MUST-FAIL: errors holds messages
  await client.POST('/auth/login', { body: { email: 'a@b.co' } }) // MUST-FAIL: password is required
  await client.GET('/api/users/{id}', { params: { path: { user: 'x' } } }) // MUST-FAIL: the parameter is id
  await client.GET('/api/nope', {}) // MUST-FAIL: no such path
  const age: number | undefined = (await client.GET('/auth/me')).data?.age // MUST-FAIL: age may be null
  console.log(counts, age)
}
